"""The turn event: every assistant row reaches the engine, through a transactional outbox.

A ``post_save`` receiver writes a :class:`~pippa_memory.models.OutboxEvent` in the same transaction
as the assistant ``Message``, and ``on_commit`` enqueues its delivery as a background task
(:mod:`pippa_memory.tasks`; one attempt is :mod:`pippa_memory.delivery`). The row is the guarantee;
the task is only a wake-up, and :func:`sweep_outbox` finds what a crash between commit and enqueue
(or mid-delivery) left behind. A worker killed mid-task leaves its django-tasks database row
``RUNNING``; the sweep marks such a row failed once its lease is over
(:func:`fail_abandoned_task_rows`), and the event, due again, is enqueued afresh.
"""

import logging
from datetime import datetime
from typing import Any

from django.apps import apps
from django.db import transaction
from django.utils import timezone
from django_tasks import TaskResultStatus

from pippa_memory.conf import memory_applies
from pippa_memory.delivery import delivery_lease
from pippa_memory.members import viewer_of
from pippa_memory.models import OutboxEvent
from pippa_memory.tasks import deliver_turn_event_task, enqueue_delivery
from pippa_memory.tool import SCOPES, TOOL_NAME
from webui.models import Message

logger = logging.getLogger(__name__)


class WorkerLost(Exception):
    """Recorded on a task row whose worker stopped before finishing it (killed or crashed)."""


def turn_event_payload(*, event_id: str, message: Message) -> dict[str, Any]:
    """The ``conversation.turn`` event of contract v2, built from the row as it is stored: the
    viewer as ``{"member", "name"}`` (``None`` for an unattended run), and each tool use with its
    id and, for the memory tool, its ``verb`` and a ``remember``'s resolved ``scope``."""
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
        },
    }


def tool_use_entry(use: dict[str, Any]) -> dict[str, Any]:
    """One stored tool use as the event carries it. A ``remember``'s ``scope`` is the one its
    result names (:func:`pippa_memory.tool_verbs.remember` resolved it). A ``remember`` the tool
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
    event_id = str(event.id)
    transaction.on_commit(lambda: enqueue_delivery(event_id))
    return event


def fail_abandoned_task_rows(*, now: datetime) -> int:
    """Mark this plug-in's django-tasks database rows still ``RUNNING`` past the delivery lease as
    failed (:class:`WorkerLost`); returns how many. Nothing else of theirs is touched: the event
    a lost delivery was carrying is due again by its own lease, and the sweep enqueues it."""
    if not apps.is_installed("django_tasks_db"):
        return 0
    # Only when the database backend is installed: its models cannot even be imported otherwise.
    from django_tasks_db.models import DBTaskResult

    # A worker still alive past the lease (it cannot be: delivery has a total deadline) would
    # simply overwrite this with its own outcome when it finishes.
    failed = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING,
        task_path=deliver_turn_event_task.module_path,
        started_at__lt=now - delivery_lease(),
    ).update(
        status=TaskResultStatus.FAILED,
        finished_at=now,
        exception_class_path=f"{WorkerLost.__module__}.{WorkerLost.__qualname__}",
        traceback=(
            f"WorkerLost: the worker running this task stopped (killed or crashed) before it "
            f"finished; the outbox sweep marked it failed at {now.isoformat()}. Its turn event, "
            "if any, is due again and delivered by a new task."
        ),
    )
    if failed:
        logger.warning("Marked %d task row(s) left running by a lost worker as failed.", failed)
    return failed


def sweep_outbox(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Fail task rows a lost worker left running, then enqueue delivery of every due event (a lost
    wake-up, an expired lease); returns how many events were enqueued."""
    now = now or timezone.now()
    fail_abandoned_task_rows(now=now)
    ids = list(
        OutboxEvent.objects.due(now)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:limit]
    )
    for event_id in ids:
        enqueue_delivery(str(event_id))
    return len(ids)


def make_due(queryset: Any, *, revive_dead: bool) -> int:
    """Make pending events in ``queryset`` due now (``retry now``), and with ``revive_dead`` dead
    ones too, restarting their retry window; wake a worker for each, and return how many."""
    events = queryset.undelivered(include_dead=revive_dead)
    ids = [str(i) for i in events.values_list("id", flat=True)]
    count = events.make_due(now=timezone.now())
    for event_id in ids:
        enqueue_delivery(event_id)
    return count
