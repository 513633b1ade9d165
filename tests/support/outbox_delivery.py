"""Delivering the plug-in's outbox in the test's own process, as the outbox worker would."""

from pippa_memory.models import OutboxEvent
from pippa_memory.outbox.delivery import deliver_due


def deliver_all() -> None:
    """Deliver every pending turn event to the engine, as the outbox worker would."""
    pending = OutboxEvent.objects.filter(status="pending").count()
    assert [o.kind for o in deliver_due(limit=pending + 1)] == ["delivered"] * pending
