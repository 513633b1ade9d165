"""The turn event: every assistant row reaches the engine, through a transactional outbox.

A ``post_save`` receiver writes a :class:`~pippa_memory.models.OutboxEvent` in the same transaction
as the assistant ``Message``, and ``on_commit`` enqueues its delivery as a background task. The row
is the guarantee; the task is only a wake-up, and :func:`sweep_outbox` finds what a crash between
commit and enqueue (or mid-delivery) left behind. Delivery claims a row with a short lease (a
conditional update, so no transaction is held open over the network), posts it with its id as the
``Idempotency-Key``, and records the outcome: 2xx or 409 delivered; 429, 5xx, 3xx and no answer
retried with capped full-jitter backoff honouring ``Retry-After``; other 4xx dead at once; an event
still failing after ``OUTBOX_MAX_AGE`` is dead and reported. A worker killed mid-task leaves its
django-tasks database row ``RUNNING``; the sweep marks such a row failed once its lease is over
(:func:`fail_abandoned_task_rows`), and the event, due again, is enqueued afresh.
"""

import logging
import random
from datetime import datetime, timedelta
from typing import Any

from django.apps import apps
from django.db import transaction
from django.utils import timezone

from pippa_memory.client import EngineAnswer, call_engine
from pippa_memory.conf import memory_settings
from pippa_memory.models import OutboxEvent
from webui.models import Message

logger = logging.getLogger(__name__)


class WorkerLost(Exception):
    """Recorded on a task row whose worker stopped before finishing it (killed or crashed)."""


def turn_event_payload(*, event_id: str, message: Message) -> dict[str, Any]:
    """The ``conversation.turn`` event of contract v1, built from the row as it is stored."""
    conversation = message.conversation
    tool_uses = []
    for use in message.tool_uses:
        entry = {"name": use.get("name"), "input": use.get("input"), "output": use.get("output")}
        verb = (use.get("input") or {}).get("verb") if isinstance(use.get("input"), dict) else None
        if verb:
            entry["verb"] = verb
        tool_uses.append(entry)
    viewer = conversation.viewer
    return {
        "type": "conversation.turn",
        "id": event_id,
        "occurred_at": message.created_at.isoformat(),
        "soul": conversation.soul.slug,
        "conversation": {
            "id": str(conversation.id),
            "pinned_head": conversation.pinned_head,
            "viewer": viewer.get_username() if viewer else None,
            "vessel": conversation.vessel.slug,
            "kind": conversation.kind,
        },
        "message": {
            "id": str(message.id),
            "role": message.role,
            "created_at": message.created_at.isoformat(),
            "content": message.content,
            "tool_uses": tool_uses,
        },
    }


def record_turn_event(message: Message) -> OutboxEvent | None:
    """Write the turn event for a new assistant row, in the caller's transaction.

    Nothing is written when memory is off or the conversation is temporary.
    """
    conversation = message.conversation
    if not memory_settings.ENABLED or conversation.temporary:
        return None
    event = OutboxEvent(soul_id=conversation.soul_id, conversation_id=conversation.id)
    event.message_id = message.id
    event.payload = turn_event_payload(event_id=str(event.id), message=message)
    event.save(force_insert=True)
    event_id = str(event.id)
    transaction.on_commit(lambda: enqueue_delivery(event_id))
    return event


def enqueue_delivery(event_id: str, *, run_after: datetime | None = None) -> None:
    """Wake the worker for one event. A failure here loses nothing: the sweep finds the row."""
    from pippa_memory.tasks import deliver_turn_event_task

    task = deliver_turn_event_task
    try:
        if run_after is not None and task.get_backend().supports_defer:
            task = task.using(run_after=run_after)
        task.enqueue(event_id)
    except Exception:
        logger.exception("Could not enqueue delivery of turn event %s; the sweep will.", event_id)


def retry_delay(*, attempts: int, retry_after: float | None) -> float:
    """Full jitter, capped: uniform(0, min(max, base * 2**attempts)); a ``Retry-After`` wins."""
    base = memory_settings.OUTBOX_BASE_DELAY
    cap = memory_settings.OUTBOX_MAX_DELAY
    delay = random.uniform(0, min(cap, base * 2 ** min(attempts, 32)))
    return max(delay, retry_after or 0.0)


def delivery_lease() -> timedelta:
    """How long one claimed attempt (or one task running it) may take before it counts as lost."""
    return timedelta(
        seconds=memory_settings.OUTBOX_DELIVERY_TIMEOUT + memory_settings.OUTBOX_LEASE_MARGIN
    )


def claim(event_id: str, *, now: datetime) -> bool:
    """Take the next attempt of a due event; False when it is not due or someone else has it."""
    # A claimed attempt is not due again until its delivery timeout and a margin have passed, so a
    # worker killed mid-delivery delays the event by about that much, and never loses it.
    lease = delivery_lease()
    return bool(
        OutboxEvent.objects.due(now).filter(pk=event_id).update(next_attempt_at=now + lease)
    )


def classify(answer: EngineAnswer) -> str:
    """``delivered``, ``retry`` or ``dead`` for one engine answer."""
    if answer.ok or answer.status == 409:
        return "delivered"
    status = answer.status
    if status is None or status == 429 or status >= 500 or 300 <= status < 400:
        return "retry"
    return "dead"


def deliver_turn_event(event_id: str) -> str:
    """One delivery attempt of one event; returns what became of it.

    ``skipped`` when the event is not due (delivered, dead, waiting, or claimed by another worker).
    """
    now = timezone.now()
    if not claim(event_id, now=now):
        return "skipped"
    event = OutboxEvent.objects.get(pk=event_id)
    answer = call_engine(
        "POST",
        "/v1/events",
        body=event.payload,
        budget=memory_settings.OUTBOX_DELIVERY_TIMEOUT,
        headers={"Idempotency-Key": str(event.id)},
    )
    outcome = classify(answer)
    event.attempts += 1
    event.last_status = answer.status
    now = timezone.now()
    if outcome == "delivered":
        event.status = OutboxEvent.Status.DELIVERED
        event.delivered_at = now
        event.last_error = ""
        event.save(
            update_fields=["status", "attempts", "last_status", "delivered_at", "last_error"]
        )
        return outcome
    event.last_error = f"{answer.reason}: {answer.detail}"[:2000]
    next_at = now + timedelta(
        seconds=retry_delay(attempts=event.attempts, retry_after=answer.retry_after)
    )
    window_start = event.revived_at or event.created_at
    expired = next_at > window_start + timedelta(seconds=memory_settings.OUTBOX_MAX_AGE)
    if outcome == "dead" or expired:
        event.status = OutboxEvent.Status.DEAD
        why = "the engine refused it" if outcome == "dead" else "retries ran out"
        logger.error(
            "Turn event %s is dead (%s) after %d attempt(s): %s",
            event.id,
            why,
            event.attempts,
            event.last_error,
        )
        event.save(update_fields=["status", "attempts", "last_status", "last_error"])
        return "dead"
    event.next_attempt_at = next_at
    event.save(update_fields=["attempts", "last_status", "last_error", "next_attempt_at"])
    enqueue_delivery(str(event.id), run_after=next_at)
    return outcome


def fail_abandoned_task_rows(*, now: datetime) -> int:
    """Mark this plug-in's django-tasks database rows still ``RUNNING`` past the delivery lease as
    failed (:class:`WorkerLost`); returns how many. Nothing else of theirs is touched: the event
    a lost delivery was carrying is due again by its own lease, and the sweep enqueues it."""
    if not apps.is_installed("django_tasks_db"):
        return 0
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from pippa_memory.tasks import deliver_turn_event_task, sweep_outbox_task

    paths = [deliver_turn_event_task.module_path, sweep_outbox_task.module_path]
    # A worker still alive past the lease (it cannot be: delivery has a total deadline) would
    # simply overwrite this with its own outcome when it finishes.
    failed = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path__in=paths, started_at__lt=now - delivery_lease()
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
    """Make events due now (``retry now``); with ``revive_dead`` also turn dead events pending."""
    statuses = [OutboxEvent.Status.PENDING]
    if revive_dead:
        statuses.append(OutboxEvent.Status.DEAD)
    now = timezone.now()
    events = queryset.filter(status__in=statuses)
    ids = [str(i) for i in events.values_list("id", flat=True)]
    count = events.update(status=OutboxEvent.Status.PENDING, next_attempt_at=now, revived_at=now)
    for event_id in ids:
        enqueue_delivery(event_id)
    return count
