"""Turns with no human in them: scheduled jobs and Soul Stream wakes.

The runner (``manage.py run_scheduler``, a ``make run`` process) claims each due job exactly once,
even with several runners: due rows are locked with ``SKIP LOCKED`` where the database has it, and
the claim itself is a conditional update of ``next_run_at``. Each run gets a conversation of its
kind with no viewer, asks the extensions for the memory it carries (``prepare_unattended``, where
the memory plug-in pins the run's conversation), answers through the one turn service (which
settles the rest of its pins like any first turn's, and whose assistant row emits its turn event
like any other), and records its outcome. The run is held by a lease renewed while it runs
(:mod:`webui.unattended.lease`), so one whose process dies is marked interrupted, not left running.
"""

import logging

from django.db import transaction
from django.utils import timezone

from webui.extensions import registered_extensions
from webui.models import Conversation, ScheduledJob, Soul, UnattendedRun, Vessel
from webui.schedules import next_run_after
from webui.turns.lock import lease_end
from webui.turns.service import TurnError, run_turn
from webui.unattended.lease import RunHeartbeat
from webui.vessels.errors import VesselError

logger = logging.getLogger(__name__)

WAKE_PROMPT = (
    "Write a short post for the household's Soul Stream: what is on your mind today, in a few "
    "sentences."
)


def claim_due_jobs(*, now: timezone.datetime | None = None) -> list[ScheduledJob]:
    """The enabled jobs due at ``now``, each moved to its next time; only the claimer gets a job."""
    now = now or timezone.now()
    claimed = []
    with transaction.atomic():
        due = (
            # Lock the job rows only: locking the joined soul and vessel rows too would make two
            # runners skip each other's jobs (SKIP LOCKED skips a row if any joined row is taken).
            ScheduledJob.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(enabled=True, next_run_at__lte=now)
            .select_related("soul", "vessel")
        )
        for job in due:
            following = next_run_after(job.schedule, max(now, job.next_run_at))
            won = ScheduledJob.objects.filter(pk=job.pk, next_run_at=job.next_run_at).update(
                next_run_at=following
            )
            if won:
                claimed.append(job)
    return claimed


def run_unattended(
    *, kind: str, soul: Soul, vessel: Vessel, prompt: str, job: ScheduledJob | None = None
) -> UnattendedRun:
    """Run one unattended turn and record it; never raises for a failed turn."""
    title = f"{job.name if job else 'Soul Stream'} · {timezone.localtime():%Y-%m-%d %H:%M}"
    conversation = Conversation.objects.create(
        soul=soul, vessel=vessel, viewer=None, kind=kind, title=title
    )
    run = UnattendedRun.objects.create(
        kind=kind, job=job, soul=soul, conversation=conversation, lease_until=lease_end()
    )
    with RunHeartbeat(run.pk):
        run_leased(run, conversation=conversation, prompt=prompt)
    return run


def run_leased(run: UnattendedRun, *, conversation: Conversation, prompt: str) -> None:
    """Prepare the run's memory, answer its turn and record how it went (its lease renewed
    meanwhile by the caller's heartbeat; freed when the outcome is saved)."""
    memory: dict = {}
    for extension in registered_extensions():
        try:
            memory.update(extension.prepare_unattended(conversation=conversation, run=run))
        except Exception:
            logger.exception("Extension %s failed to prepare an unattended run", extension.name)
    run.memory = memory or {"source": "none", "reason": "no memory extension is installed"}
    try:
        run_turn(conversation=conversation, text=prompt)
    except TurnError as error:
        run.outcome = UnattendedRun.Outcome.FAILED
        # The run's record is for whoever runs the household: the provider's own detail too.
        cause = error.__cause__
        detail = f" ({cause.message})" if isinstance(cause, VesselError) else ""
        run.error = error.message + detail
    except Exception as exc:
        logger.exception("Unattended run %s failed", run.pk)
        run.outcome = UnattendedRun.Outcome.FAILED
        run.error = f"Internal error ({type(exc).__name__}); see the server log."
    else:
        run.outcome = UnattendedRun.Outcome.SUCCEEDED
    run.finished_at = timezone.now()
    run.lease_until = None
    run.save(update_fields=["memory", "outcome", "error", "finished_at", "lease_until"])


def run_job(job: ScheduledJob) -> UnattendedRun:
    prompt = job.prompt or (WAKE_PROMPT if job.kind == ScheduledJob.Kind.WAKE else job.name)
    return run_unattended(kind=job.kind, soul=job.soul, vessel=job.vessel, prompt=prompt, job=job)


def run_due_jobs(*, now: timezone.datetime | None = None) -> list[UnattendedRun]:
    """Claim and run every due job; returns their runs."""
    return [run_job(job) for job in claim_due_jobs(now=now)]


def default_wake_vessel() -> Vessel | None:
    """The vessel a wake uses when none is named: the brain's first choice, else any enabled one."""
    enabled = Vessel.objects.filter(enabled=True)
    return (
        enabled.filter(brain_priority__isnull=False).order_by("brain_priority", "slug").first()
        or enabled.order_by("name").first()
    )


def run_wake(*, soul: Soul, vessel: Vessel | None = None) -> UnattendedRun:
    """Wake ``soul`` now for the Soul Stream."""
    vessel = vessel or default_wake_vessel()
    if vessel is None:
        raise ValueError("No enabled vessel can carry the wake.")
    return run_unattended(kind=Conversation.Kind.WAKE, soul=soul, vessel=vessel, prompt=WAKE_PROMPT)
