"""Background tasks (django-tasks), and the one place the plug-in enqueues them.

A task is only a wake-up: the outbox row is the guarantee, so a wake-up that cannot be enqueued
loses nothing (the sweep finds the row).
"""

import logging
from datetime import datetime

from django_tasks import task

from pippa_memory import delivery

logger = logging.getLogger(__name__)


@task()
def deliver_turn_event_task(event_id: str) -> str:
    """Deliver one turn event to the memory engine (one attempt), and when it is to be retried,
    enqueue the retry for then; returns what became of the event."""
    result = delivery.deliver_turn_event(event_id)
    if result.retry_at is not None:
        enqueue_delivery(event_id, run_after=result.retry_at)
    return result.outcome


def enqueue_delivery(event_id: str, *, run_after: datetime | None = None) -> None:
    """Wake a worker for one event, at ``run_after`` where the backend can defer a task (else at
    once: the claim then skips an event not yet due). A failure here loses nothing: the sweep
    finds the row."""
    wake_up = deliver_turn_event_task
    try:
        if run_after is not None and wake_up.get_backend().supports_defer:
            wake_up = wake_up.using(run_after=run_after)
        wake_up.enqueue(event_id)
    except Exception:
        logger.exception("Could not enqueue delivery of turn event %s; the sweep will.", event_id)
