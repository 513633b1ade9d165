"""How an unattended run is told: in the household's words on the Soul Stream page, and with its
records (revision, sha256, reason codes) in the admin."""

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.formats import date_format

from webui.models import ScheduledJob, UnattendedRun


def describe_memory(memory: dict[str, Any]) -> str:
    """For the admin: ``with bundle r3 (sha256 1a2b3c4d5e6f)``, ``with brief r3``, or why there
    was none."""
    source = memory.get("source")
    if source in ("bundle", "brief"):
        text = f"with {source} {memory.get('revision', '')}".rstrip()
        if memory.get("sha256"):
            text += f" (sha256 {memory['sha256'][:12]})"
        return text
    return f"without memory: {memory.get('reason') or 'none was attached'}"


def when_said(moment: datetime, *, now: datetime | None = None) -> str:
    """``at 09:12`` today, ``yesterday at 09:12``, ``on 2 Dec at 09:12``, in local time (with the
    year when it is not this year's)."""
    local = timezone.localtime(moment)
    today = timezone.localtime(now or timezone.now()).date()
    clock = date_format(local, "H:i")
    if local.date() == today:
        return f"at {clock}"
    if local.date() == today - timedelta(days=1):
        return f"yesterday at {clock}"
    day = date_format(local, "j M" if local.year == today.year else "j M Y")
    return f"on {day} at {clock}"


def post_heading(run: UnattendedRun, *, now: datetime | None = None) -> str:
    """What the run did, as the family would say it: ``Pippa woke at 09:12 and wrote:``."""
    soul, when = run.soul.name, when_said(run.started_at, now=now)
    if run.kind == ScheduledJob.Kind.WAKE:
        did, tried = f"woke {when} and wrote:", f"woke {when} but could not write."
    else:
        what = f"“{run.job.name}”" if run.job else "a scheduled note"
        did, tried = f"wrote {what} {when}:", f"was to write {what} {when} but could not."
    if run.outcome == UnattendedRun.Outcome.FAILED:
        return f"{soul} {tried}"
    if run.outcome == UnattendedRun.Outcome.RUNNING:
        return f"{soul} is writing (started {when})…"
    if run.outcome == UnattendedRun.Outcome.INTERRUPTED:
        return f"{soul} started writing {when} but was interrupted."
    return f"{soul} {did}"


def memory_line(run: UnattendedRun) -> str:
    """Whether the run had the household's memories with it, without the records behind it."""
    if run.memory.get("source") in ("bundle", "brief"):
        return f"{run.soul.name} had the household's memories in mind."
    return f"{run.soul.name} had no memories to go on this time."
