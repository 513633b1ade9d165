"""Scheduled jobs for the tests of unattended runs: an hourly job, due now or in an hour."""

from datetime import timedelta

from django.utils import timezone

from webui.models import ScheduledJob, Soul, Vessel


def hourly_job(
    soul: Soul,
    vessel: Vessel,
    *,
    due: bool = True,
    name: str = "Morning note",
    prompt: str = "Write the morning note.",
) -> ScheduledJob:
    """An hourly job of ``soul`` on ``vessel``: due now, or (``due=False``) in an hour."""
    later = timedelta(seconds=-1) if due else timedelta(hours=1)
    return ScheduledJob.objects.create(
        name=name,
        soul=soul,
        vessel=vessel,
        prompt=prompt,
        schedule="every 1h",
        next_run_at=timezone.now() + later,
    )
