"""Unattended runs: scheduled jobs and Soul Stream wakes, their runs, and the daily chores."""

from django.db import models
from django.urls import reverse
from django.utils import timezone

from webui.models.conversations import Conversation
from webui.models.souls import Soul
from webui.models.vessels import Vessel
from webui.schedules import validate_schedule


class ScheduledJob(models.Model):
    """An unattended run on a schedule: a job (its prompt answered by a soul) or a Soul Stream wake."""

    class Kind(models.TextChoices):
        JOB = "job", "Scheduled job"
        WAKE = "wake", "Soul Stream wake"

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.JOB)
    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="scheduled_jobs")
    vessel = models.ForeignKey(Vessel, on_delete=models.PROTECT, related_name="scheduled_jobs")
    prompt = models.TextField(
        blank=True, help_text="What the soul is asked; a wake without one gets the standard ask."
    )
    schedule = models.CharField(
        max_length=100,
        validators=[validate_schedule],
        help_text="An interval such as 'every 15m' (s, m, h or d) or a cron expression '0 7 * * *'.",
    )
    enabled = models.BooleanField(default=True)
    next_run_at = models.DateTimeField(
        default=timezone.now, db_index=True, help_text="When the runner starts it next."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class UnattendedRun(models.Model):
    """One run with no human in it: a scheduled job or a Soul Stream wake, and how it went."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        # Its process ended (killed, restarted) before it finished: its lease lapsed.
        INTERRUPTED = "interrupted", "Interrupted"

    kind = models.CharField(max_length=8, choices=ScheduledJob.Kind.choices)
    job = models.ForeignKey(
        ScheduledJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="unattended_runs")
    conversation = models.OneToOneField(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.RUNNING)
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="While running: until when its process holds it (renewed while it runs).",
    )
    error = models.TextField(blank=True)
    memory = models.JSONField(
        default=dict,
        blank=True,
        help_text="What memory the run carried (bundle or brief, revision, sha256) or why none.",
    )
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.soul} at {self.started_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        """Its post on the Soul Stream, which every member reads."""
        return reverse("soul-stream") + f"#run-{self.pk}"


class DailyChore(models.Model):
    """Upkeep the scheduler runs once per local calendar day (``prune``), and how it last went.

    ``last_day`` is taken before the chore runs, so a restarted scheduler neither runs it twice on
    one day nor skips a day it was up for.
    """

    name = models.SlugField(max_length=50, unique=True)
    last_day = models.DateField(null=True, blank=True, help_text="The day it last ran (local).")
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty while it runs, or if it stopped half-way."
    )
    last_result = models.JSONField(
        default=dict, blank=True, help_text="What it did: rows deleted by kind, or the error."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
