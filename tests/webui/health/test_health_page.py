"""The household's health page (issue 38, point 2), the host's part: the database, the web server
and the scheduler each in a sentence and a colour, with what to do when red; the same as JSON for
staff; ``/health/`` for a load balancer with no details; a plug-in's lines through the extension
point. (The memory plug-in's lines: ``tests/pippa_memory/test_health_lines.py``; ``/health/`` answering
503 when the database is gone: ``tests/reliability/test_make_run_keeps_running.py``.)"""

import re
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from webui.extensions import HealthLine, TurnExtension
from webui.health.beats import ProcessBeat, record_beat
from webui.models import ProcessHeartbeat

pytestmark = pytest.mark.django_db


def line_html(page: str, key: str) -> str:
    found = re.search(rf'<li class="health-line (\w+)" id="health-{key}".*?</li>', page, re.S)
    assert found, f"no {key} line on the page"
    return found.group(0)


def beat_seconds_ago(role: str, seconds: float) -> None:
    record_beat(role, started_at=timezone.now() - timedelta(hours=1))
    ProcessHeartbeat.objects.filter(role=role).update(
        beat_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_the_health_page_is_for_staff_only(client: Client, user: Any, staff_client: Client) -> None:
    assert client.get("/status/").status_code == 302  # to the login page
    client.force_login(user)
    assert client.get("/status/").status_code == 403
    assert client.get("/status.json").status_code == 403
    assert staff_client.get("/status/").status_code == 200


def test_a_scheduler_that_never_beat_is_red_with_what_to_do(staff_client: Client) -> None:
    line = line_html(staff_client.get("/status/").content.decode(), "scheduler")

    assert 'class="health-line red"' in line
    assert "never said it is running" in line
    assert "What to do:" in line
    assert "run_scheduler --every 5" in line


def test_a_scheduler_that_beats_is_green(staff_client: Client) -> None:
    beat_seconds_ago("scheduler", 4)

    line = line_html(staff_client.get("/status/").content.decode(), "scheduler")

    assert 'class="health-line green"' in line
    assert re.search(r"last heard [4-9] seconds ago", line)
    assert "What to do:" not in line


def test_a_scheduler_that_stopped_beating_is_red_and_says_since_when(staff_client: Client) -> None:
    beat_seconds_ago("scheduler", 300)

    line = line_html(staff_client.get("/status/").content.decode(), "scheduler")

    assert 'class="health-line red"' in line
    assert "It stopped 5 minutes ago" in line
    assert "What to do:" in line
    page = staff_client.get("/status/").content.decode()
    assert "Something has stopped" in page


def test_the_web_server_without_a_heartbeat_is_amber_and_with_one_green(
    staff_client: Client,
) -> None:
    amber = line_html(staff_client.get("/status/").content.decode(), "web")
    beat_seconds_ago("web", 2)
    green = line_html(staff_client.get("/status/").content.decode(), "web")

    assert 'class="health-line amber"' in amber
    assert "It answers (it showed this page), but its heartbeat is missing" in amber
    assert 'class="health-line green"' in green


def test_the_database_line_says_it_answers(staff_client: Client) -> None:
    line = line_html(staff_client.get("/status/").content.decode(), "database")

    assert 'class="health-line green"' in line
    assert re.search(r"The database \((SQLite|PostgreSQL)\) answers, in \d+ ms", line)


def test_a_plug_ins_lines_come_through_the_extension_point(
    staff_client: Client, extension: Callable[[TurnExtension], TurnExtension]
) -> None:
    class Lines(TurnExtension):
        name = "lines"

        def health_lines(self) -> list[HealthLine]:
            return [HealthLine("thing", "A plug-in's thing", "failing", "It fell.", "Lift it.")]

    class Broken(TurnExtension):
        name = "broken-plug-in"

        def health_lines(self) -> list[HealthLine]:
            raise RuntimeError("no")

    extension(Lines())
    extension(Broken())

    page = staff_client.get("/status/").content.decode()

    assert "It fell." in line_html(page, "thing")
    assert "Lift it." in line_html(page, "thing")
    broken = line_html(page, "broken-plug-in")
    assert 'class="health-line red"' in broken
    assert "could not be read (RuntimeError)" in broken


def test_the_json_has_every_line_with_its_state_colour_and_what_to_do(
    staff_client: Client,
) -> None:
    beat_seconds_ago("web", 1)
    beat_seconds_ago("scheduler", 600)

    answer = staff_client.get("/status.json").json()

    lines = {line["key"]: line for line in answer["lines"]}
    assert answer["status"] == "failing"
    assert lines["database"]["state"] == "ok"
    assert lines["web"]["colour"] == "green"
    assert lines["scheduler"]["state"] == "failing"
    assert lines["scheduler"]["colour"] == "red"
    assert "run_scheduler" in lines["scheduler"]["what_to_do"]
    assert lines["scheduler"]["details"]["seconds_since_beat"] >= 600


def test_the_load_balancers_health_says_ok_and_nothing_else(client: Client) -> None:
    beat_seconds_ago("scheduler", 600)  # a stopped scheduler does not stop the site serving

    answer = client.get("/health/")

    assert answer.status_code == 200
    assert answer.content == b"ok\n"
    assert answer["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db(transaction=True)
def test_a_process_beats_from_its_own_thread_until_stopped(settings: Any) -> None:
    settings.WEBUI = {**settings.WEBUI, "HEARTBEAT_SECONDS": 0.3}
    beat = ProcessBeat("scheduler").start()
    try:
        deadline = time.monotonic() + 10
        while not ProcessHeartbeat.objects.filter(role="scheduler").exists():
            assert time.monotonic() < deadline, "no first beat"
            time.sleep(0.05)
        first = ProcessHeartbeat.objects.get(role="scheduler").beat_at
        while ProcessHeartbeat.objects.get(role="scheduler").beat_at == first:
            assert time.monotonic() < deadline, "no second beat"
            time.sleep(0.05)
    finally:
        beat.stopped.set()
        beat.thread.join(timeout=5)
    row = ProcessHeartbeat.objects.get(role="scheduler")
    assert row.started_at == beat.started_at
    assert row.pid is not None
