"""Background tasks (django-tasks): thin wrappers over the outbox service."""

from django_tasks import task

from pippa_memory import outbox


@task()
def deliver_turn_event_task(event_id: str) -> str:
    """Deliver one turn event to the memory engine (one attempt)."""
    return outbox.deliver_turn_event(event_id)


@task()
def sweep_outbox_task() -> int:
    """Enqueue every due turn event."""
    return outbox.sweep_outbox()
