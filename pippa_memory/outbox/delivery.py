"""Delivering claimed turn events: post each, decide what became of it, record the batch.

The events come claimed from the queue (:mod:`pippa_memory.outbox.queue`) with a short lease, so no
transaction is held open over the network; each goes with its id as the ``Idempotency-Key``
through the one engine client (timeouts, total deadline, breaker, keep-alive session). 2xx or 409
is delivered; 429, 5xx, 3xx and no answer are retried with capped full-jitter backoff honouring
``Retry-After``; other 4xx are dead at once; an event still failing after ``OUTBOX_MAX_AGE`` is
dead and reported. Delivery never waits for a retry: it writes when the event is due again, and
the worker (:mod:`pippa_memory.outbox.worker`) claims it then.
"""

import logging
from datetime import datetime, timedelta

from django.utils import timezone

from pippa_memory.conf import memory_settings
from pippa_memory.engine.client import EngineOutcome, call_engine
from pippa_memory.outbox.queue import ClaimedEvent, Outcome, claim_due, record_outcomes
from webui import outbound_http

logger = logging.getLogger(__name__)


def retry_delay(*, attempts: int, retry_after: float | None) -> float:
    """Full jitter, capped: uniform(0, min(max, base * 2**attempts)); a ``Retry-After`` wins."""
    delay = outbound_http.full_jitter_delay(
        attempt=attempts,
        base=memory_settings.OUTBOX_BASE_DELAY,
        cap=memory_settings.OUTBOX_MAX_DELAY,
    )
    return max(delay, retry_after or 0.0)


def delivery_lease() -> timedelta:
    """How long one claimed attempt may take before it counts as lost (its worker killed)."""
    return timedelta(
        seconds=memory_settings.OUTBOX_DELIVERY_TIMEOUT + memory_settings.OUTBOX_LEASE_MARGIN
    )


def classify(outcome: EngineOutcome) -> str:
    """``delivered``, ``retry`` or ``dead`` for one engine outcome."""
    if outcome.ok or outcome.status == 409:
        return "delivered"
    status = outcome.status
    if status is None or status == 429 or status >= 500 or 300 <= status < 400:
        return "retry"
    return "dead"


def post_event(event: ClaimedEvent) -> Outcome:
    """Send one claimed event and say what became of it (nothing is written here)."""
    posted = call_engine(
        "POST",
        "/v1/events",
        body=event.payload,
        budget=memory_settings.OUTBOX_DELIVERY_TIMEOUT,
        headers={"Idempotency-Key": event.id},
    )
    kind = classify(posted)
    if kind == "delivered":
        return Outcome(event=event, kind=kind, status=posted.status)
    error = f"{posted.reason}: {posted.detail}"
    attempts = event.attempts + 1
    next_at = timezone.now() + timedelta(
        seconds=retry_delay(attempts=attempts, retry_after=posted.retry_after)
    )
    retries_end = (event.revived_at or event.created_at) + timedelta(
        seconds=memory_settings.OUTBOX_MAX_AGE
    )
    if kind == "dead" or next_at > retries_end:
        why = "the engine refused it" if kind == "dead" else "retries ran out"
        logger.error(
            "Turn event %s is dead (%s) after %d attempt(s): %s", event.id, why, attempts, error
        )
        return Outcome(event=event, kind="dead", status=posted.status, error=error)
    return Outcome(
        event=event, kind="retry", status=posted.status, error=error, next_attempt_at=next_at
    )


def deliver_claimed(events: list[ClaimedEvent]) -> list[Outcome]:
    """Post each claimed event in turn, then record all their outcomes in one go. Should the
    lease come within one delivery timeout of its end (a slow engine, a large batch), the events
    not yet sent are handed back, due at once, rather than risk two workers sending them."""
    timeout = timedelta(seconds=memory_settings.OUTBOX_DELIVERY_TIMEOUT)
    outcomes = []
    for event in events:
        if timezone.now() + timeout > event.lease_until:
            outcomes.append(Outcome(event=event, kind="released", status=None))
            continue
        outcomes.append(post_event(event))
    record_outcomes(outcomes, now=timezone.now())
    return outcomes


def deliver_due(*, limit: int, now: datetime | None = None) -> list[Outcome]:
    """Claim up to ``limit`` events due at ``now`` and deliver them; empty when none is due."""
    now = now or timezone.now()
    events = claim_due(now=now, until=now + delivery_lease(), limit=limit)
    return deliver_claimed(events) if events else []
