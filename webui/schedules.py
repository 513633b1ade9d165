"""Schedules for unattended runs: ``every 15m`` (s, m, h or d) or a five-field cron expression."""

import re
from datetime import datetime, timedelta

from croniter import croniter
from django.core.exceptions import ValidationError

INTERVAL = re.compile(r"^every\s+(\d+)\s*([smhd])$", re.IGNORECASE)
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def schedule_problem(schedule: str) -> str | None:
    """Why ``schedule`` cannot be used, or ``None``."""
    text = schedule.strip()
    match = INTERVAL.match(text)
    if match:
        return None if int(match.group(1)) > 0 else "The interval must be at least 1."
    if len(text.split()) == 5 and croniter.is_valid(text):
        return None
    return (
        f"{schedule!r} is not a schedule: write an interval such as 'every 15m' (s, m, h or d) or a "
        "five-field cron expression such as '0 7 * * *'."
    )


def validate_schedule(schedule: str) -> None:
    problem = schedule_problem(schedule)
    if problem:
        raise ValidationError(problem)


def next_run_after(schedule: str, after: datetime) -> datetime:
    """The first time the schedule fires strictly after ``after``."""
    text = schedule.strip()
    match = INTERVAL.match(text)
    if match:
        return after + timedelta(**{UNITS[match.group(2).lower()]: int(match.group(1))})
    return croniter(text, after).get_next(datetime)
