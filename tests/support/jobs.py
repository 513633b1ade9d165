"""A scheduled job that is due now, as the unattended runs' tests set one up."""

from datetime import timedelta
from typing import Any

from django.utils import timezone

from webui.models import ScheduledJob, Soul, Vessel


def due_job(soul: Soul, vessel: Vessel, **fields: Any) -> ScheduledJob:
    """The hourly "Morning note" for ``soul`` on ``vessel``, due a second ago (``fields`` change
    any of it)."""
    fields.setdefault("name", "Morning note")
    fields.setdefault("prompt", "Write the morning note.")
    fields.setdefault("schedule", "every 1h")
    fields.setdefault("next_run_at", timezone.now() - timedelta(seconds=1))
    return ScheduledJob.objects.create(soul=soul, vessel=vessel, **fields)
