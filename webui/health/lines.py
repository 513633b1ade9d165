"""The health page's lines, each a :class:`~webui.extensions.HealthLine` in a family's words: the
database, the web server and the scheduler here; the plug-ins' own (the memory plug-in's
delivery worker, engine, deliveries and brain door) through :func:`webui.extensions.health_lines`.
"""

import time
from datetime import datetime

from django.db import DatabaseError, connection
from django.utils import timezone

from webui.extensions import HealthLine, health_lines
from webui.health.beats import stale_after_seconds
from webui.models import ProcessHeartbeat

#: Say how long ago in words, at this precision.
UNITS = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))
MAKE_RUN_RESTARTS = (
    "Under `make run` it is started again within seconds: if this stays red, the `make run` "
    "window says why it stops. "
)


def how_long(seconds: float) -> str:
    """``seconds`` in words: "4 seconds", "1 minute", "3 hours"."""
    seconds = max(0, int(seconds))
    for size, unit in UNITS:
        if seconds >= size or size == 1:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError("unreachable")


def clock(moment: datetime) -> str:
    """``moment`` as the household's clock shows it."""
    return f"{timezone.localtime(moment):%H:%M:%S}"


def database_line() -> HealthLine:
    """Whether the database answers, with the site's own tables in it."""
    vendor = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}.get(
        connection.vendor, connection.vendor
    )
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        ProcessHeartbeat.objects.exists()  # the site's tables are there, not an empty database
    except DatabaseError as error:
        return HealthLine(
            key="database",
            title="The household's database",
            state="failing",
            sentence=f"The database ({vendor}) does not answer: {type(error).__name__}.",
            what_to_do="Nothing can be shown or saved until it answers. Check that its server "
            "is running and its disk has room, then that DATABASE_URL names it (the web "
            "server's log has the error).",
            details={"vendor": connection.vendor, "error": type(error).__name__},
        )
    milliseconds = round((time.monotonic() - started) * 1000)
    return HealthLine(
        key="database",
        title="The household's database",
        state="ok",
        sentence=f"The database ({vendor}) answers, in {milliseconds} ms.",
        details={"vendor": connection.vendor, "milliseconds": milliseconds},
    )


def newest_beats(role: str) -> list[ProcessHeartbeat]:
    """``role``'s beats, one per host, newest first."""
    return list(ProcessHeartbeat.objects.filter(role=role).order_by("-beat_at"))


def beat_details(beats: list[ProcessHeartbeat]) -> dict[str, object]:
    return {
        "beats": [
            {
                "host": beat.host,
                "pid": beat.pid,
                "started_at": beat.started_at.isoformat() if beat.started_at else None,
                "beat_at": beat.beat_at.isoformat(),
            }
            for beat in beats
        ]
    }


def heartbeat_line(*, role: str, title: str, what_it_does: str, start_with: str) -> HealthLine:
    """The line of a process that beats: ``ok`` while its newest beat is fresh, ``failing`` when
    it stopped beating or never did. ``what_it_does`` says what stops with it, ``start_with``
    the command that starts it."""
    beats = newest_beats(role)
    details = beat_details(beats)
    if not beats:
        state, sentence = "failing", f"It has never said it is running, so {what_it_does}."
    else:
        newest = beats[0]
        age = (timezone.now() - newest.beat_at).total_seconds()
        details["seconds_since_beat"] = round(age, 1)
        if age > stale_after_seconds():
            state = "failing"
            sentence = (
                f"It stopped {how_long(age)} ago (last heard at {clock(newest.beat_at)}), "
                f"so {what_it_does}."
            )
        else:
            since = f", running since {clock(newest.started_at)}" if newest.started_at else ""
            state, sentence = "ok", f"Running: last heard {how_long(age)} ago{since}."
    restart = f"{MAKE_RUN_RESTARTS}Elsewhere start `{start_with}` again."
    return HealthLine(
        key=role,
        title=title,
        state=state,
        sentence=sentence,
        what_to_do=restart if state == "failing" else "",
        details=details,
    )


def web_line() -> HealthLine:
    """The web server: it answers (it served this page); its heartbeat says since when."""
    line = heartbeat_line(
        role="web",
        title="The web server",
        what_it_does="only this page shows it is answering",
        start_with="gunicorn -c python:pippa_site.gunicorn_conf pippa_site.wsgi",
    )
    if line.state == "ok":
        return line
    return HealthLine(
        key="web",
        title=line.title,
        state="warning",
        sentence=f"It answers (it showed this page), but its heartbeat is missing: {line.sentence}",
        what_to_do="Start it with the Procfile's `web` line (gunicorn with "
        "pippa_site/gunicorn_conf.py), which writes the heartbeat.",
        details=line.details,
    )


def scheduler_line() -> HealthLine:
    return heartbeat_line(
        role="scheduler",
        title="The scheduler (jobs, wakes, the daily tidy-up)",
        what_it_does="no job or wake runs and nothing old is tidied away",
        start_with="python manage.py run_scheduler --every 5",
    )


def all_lines() -> list[HealthLine]:
    """Every line of the page: the database first (when it fails nothing else can be read)."""
    database = database_line()
    if database.state != "ok":
        return [database]
    return [database, web_line(), scheduler_line(), *health_lines()]


def overall_state(lines: list[HealthLine]) -> str:
    """The worst state among ``lines``: failing, then warning, else ok."""
    states = {line.state for line in lines}
    for state in ("failing", "warning"):
        if state in states:
            return state
    return "ok"
