"""One delivery attempt of one turn event: claim it, post it, record what the engine said.

Delivery never enqueues anything: it returns what became of the event and, when it is to be tried
again, when; the task that ran it (:mod:`pippa_memory.tasks`) asks for that wake-up. A claim is a
short lease taken by a conditional update, so no transaction is held open over the network; the
event goes with its id as the ``Idempotency-Key``. 2xx or 409 is delivered; 429, 5xx, 3xx and no
answer are retried with capped full-jitter backoff honouring ``Retry-After``; other 4xx are dead
at once; an event still failing after ``OUTBOX_MAX_AGE`` is dead and reported.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from pippa_memory.client import EngineAnswer, call_engine
from pippa_memory.conf import memory_settings
from pippa_memory.models import OutboxEvent
from webui import outbound_http

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeliveryResult:
    """What one attempt made of an event: ``delivered``, ``retry``, ``dead`` or ``skipped`` (not
    due: delivered, dead, waiting, or claimed by another worker), and for ``retry`` when the event
    is due again."""

    outcome: str
    retry_at: datetime | None = None


def retry_delay(*, attempts: int, retry_after: float | None) -> float:
    """Full jitter, capped: uniform(0, min(max, base * 2**attempts)); a ``Retry-After`` wins."""
    delay = outbound_http.full_jitter_delay(
        attempt=attempts,
        base=memory_settings.OUTBOX_BASE_DELAY,
        cap=memory_settings.OUTBOX_MAX_DELAY,
    )
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
    return OutboxEvent.objects.claim(event_id, now=now, until=now + delivery_lease())


def classify(answer: EngineAnswer) -> str:
    """``delivered``, ``retry`` or ``dead`` for one engine answer."""
    if answer.ok or answer.status == 409:
        return "delivered"
    status = answer.status
    if status is None or status == 429 or status >= 500 or 300 <= status < 400:
        return "retry"
    return "dead"


def deliver_turn_event(event_id: str) -> DeliveryResult:
    """One delivery attempt of one event, recorded on its row; says what became of it and, when
    it is to be retried, when (the caller wakes a worker then, or the sweep finds it)."""
    if not claim(event_id, now=timezone.now()):
        return DeliveryResult("skipped")
    event = OutboxEvent.objects.get(pk=event_id)
    answer = call_engine(
        "POST",
        "/v1/events",
        body=event.payload,
        budget=memory_settings.OUTBOX_DELIVERY_TIMEOUT,
        headers={"Idempotency-Key": str(event.id)},
    )
    outcome = classify(answer)
    now = timezone.now()
    if outcome == "delivered":
        event.record_delivered(status=answer.status, at=now)
        return DeliveryResult("delivered")
    error = f"{answer.reason}: {answer.detail}"
    delay = retry_delay(attempts=event.attempts + 1, retry_after=answer.retry_after)
    next_at = now + timedelta(seconds=delay)
    max_age = timedelta(seconds=memory_settings.OUTBOX_MAX_AGE)
    if outcome == "dead" or next_at > event.retries_end_at(max_age=max_age):
        event.record_dead(status=answer.status, error=error)
        why = "the engine refused it" if outcome == "dead" else "retries ran out"
        logger.error(
            "Turn event %s is dead (%s) after %d attempt(s): %s",
            event.id,
            why,
            event.attempts,
            event.last_error,
        )
        return DeliveryResult("dead")
    event.record_retry(status=answer.status, error=error, next_attempt_at=next_at)
    return DeliveryResult("retry", retry_at=next_at)
