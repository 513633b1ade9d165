"""Receivers at the app boundary: the plug-in listens to the host's models, one call each."""

from typing import Any

from pippa_memory.engine.members import member_id
from pippa_memory.outbox.events import record_turn_event
from pippa_memory.pins.forgetting import forget_departed_member
from webui.models import Message


def emit_turn_event(sender: type[Message], instance: Message, created: bool, **kwargs: Any) -> None:
    """A new assistant row, from any path (chat, jobs, wakes, the admin), gets its turn event."""
    if created and instance.role == Message.Role.ASSISTANT and not kwargs.get("raw"):
        record_turn_event(instance)


def forget_deleted_member(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A deleted account takes its memory blocks with it (:func:`forget_departed_member`)."""
    forget_departed_member(member_id(instance))
