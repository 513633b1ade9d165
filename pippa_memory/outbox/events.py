"""The turn event: every assistant row reaches the engine, through a transactional outbox.

A ``post_save`` receiver writes a :class:`~pippa_memory.models.OutboxEvent` in the same transaction
as the assistant ``Message``: that row is the queue, and the only write the event adds to a turn.
Its commit rings the delivery worker's doorbell (:mod:`pippa_memory.outbox.doorbell`: on
PostgreSQL the outbox table's trigger, elsewhere an ``on_commit`` datagram), which claims due rows (:mod:`pippa_memory.outbox.queue`) and delivers them
(:mod:`pippa_memory.outbox.delivery`). A lost ring, a crash between commit and ring, or a worker killed
mid-delivery loses nothing: the worker polls for due rows, and a killed worker's claims are due
again once their lease ends. :func:`sweep_outbox` delivers whatever is due, once.
"""

import logging
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from pippa_memory.conf import memory_applies
from pippa_memory.engine.members import viewer_of
from pippa_memory.models import OutboxEvent
from pippa_memory.outbox.delivery import deliver_due
from pippa_memory.outbox.doorbell import ring_worker, rings_by_trigger
from pippa_memory.turn.tool import SCOPES, TOOL_NAME
from webui.models import Message

logger = logging.getLogger(__name__)


def turn_event_payload(*, event_id: str, message: Message) -> dict[str, Any]:
    """The ``conversation.turn`` event of contract v3, built from the row as it is stored: the
    viewer as ``{"member", "name"}`` (``None`` for an unattended run), each tool use with its
    id and, for the memory tool, its ``verb`` and a ``remember``'s resolved ``scope``; whether
    the reply was ``stopped`` (cut short, its content partial) and the id of the user message
    it ``answers`` (``None`` when the row answers none)."""
    conversation = message.conversation
    return {
        "type": "conversation.turn",
        "id": event_id,
        "occurred_at": message.created_at.isoformat(),
        "soul": conversation.soul.slug,
        "conversation": {
            "id": str(conversation.id),
            "pinned_head": conversation.pinned_head,
            "viewer": viewer_of(conversation),
            "vessel": conversation.vessel.slug,
            "kind": conversation.kind,
        },
        "message": {
            "id": str(message.id),
            "role": message.role,
            "created_at": message.created_at.isoformat(),
            "content": message.content,
            "tool_uses": [tool_use_entry(use) for use in message.tool_uses],
            "stopped": message.stopped,
            "answers": str(message.reply_to_id) if message.reply_to_id else None,
        },
    }


def tool_use_entry(use: dict[str, Any]) -> dict[str, Any]:
    """One stored tool use as the event carries it. A ``remember``'s ``scope`` is the one its
    result names (:func:`pippa_memory.turn.verbs.remember` resolved it). A ``remember`` the tool
    refused has none, so the engine's own default holds: private to the viewer (household only
    for an unattended run), never shared by mistake."""
    entry = {
        "id": use.get("id"),
        "name": use.get("name"),
        "input": use.get("input"),
        "output": use.get("output"),
    }
    tool_input, output = use.get("input"), use.get("output")
    verb = tool_input.get("verb") if isinstance(tool_input, dict) else None
    if verb:
        entry["verb"] = verb
    scope = output.get("scope") if isinstance(output, dict) else None
    if verb == "remember" and use.get("name") == TOOL_NAME and scope in SCOPES:
        entry["scope"] = scope
    return entry


def record_turn_event(message: Message) -> OutboxEvent | None:
    """Write the turn event for a new assistant row, in the caller's transaction.

    Nothing is written when memory is off or the conversation is temporary.
    """
    conversation = message.conversation
    if not memory_applies(conversation):
        return None
    event = OutboxEvent(soul_id=conversation.soul_id, conversation_id=conversation.id)
    event.message_id = message.id
    event.payload = turn_event_payload(event_id=str(event.id), message=message)
    event.save(force_insert=True)
    if not rings_by_trigger():
        transaction.on_commit(ring_worker)
    return event


def sweep_outbox(*, now: datetime | None = None, batch: int = 100) -> int:
    """Deliver every event due at ``now`` (a lost ring, an expired lease), one attempt each, in
    batches; returns how many attempts were made. What the worker's poll does, run once."""
    now = now or timezone.now()
    due = OutboxEvent.objects.due(now).count()
    attempted = 0
    while attempted < due:
        outcomes = deliver_due(limit=min(batch, due - attempted), now=now)
        if not outcomes:
            break
        attempted += len(outcomes)
    return attempted


def make_due(queryset: Any, *, revive_dead: bool) -> int:
    """Make pending events in ``queryset`` due now (``retry now``), and with ``revive_dead`` dead
    ones too, restarting their retry window; ring the worker, and return how many."""
    count = queryset.undelivered(include_dead=revive_dead).make_due(now=timezone.now())
    if count:
        transaction.on_commit(ring_worker)
    return count
