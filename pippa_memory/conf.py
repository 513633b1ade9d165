"""The plug-in's settings: one namespaced ``PIPPA_MEMORY`` dict in Django settings, with defaults
here only.

``pippa_site/settings.py`` fills that dict from the environment with :func:`from_environment`
(``PIPPA_MEMORY_NAME``, cast to the default's type), so a variable that is not set falls through to
the default stated here and nowhere else. Read through :data:`memory_settings`, which looks the value up on every access so that
``override_settings`` in tests and changes between requests are always seen. Whether memory takes
part in one conversation is one predicate, :func:`memory_applies`.
"""

from typing import TYPE_CHECKING, Any

import environ
from django.conf import settings

from webui.conf import variables_that_are_set

if TYPE_CHECKING:
    from webui.models import Conversation

DEFAULTS: dict[str, Any] = {
    # The one switch: false closes every seam and door on this side.
    "ENABLED": True,
    # Base URL of the memory engine; empty means "not configured" (absent, no traffic).
    "URL": "",
    # Sent as "Authorization: Bearer ..." on every call to the engine.
    "TOKEN": "",
    # Each caller of the engine has a budget of its own (pippa_memory/engine/budget.py): the total
    # seconds its engine calls may take. No read waits past the time left in its caller's budget.
    "CONNECT_TIMEOUT": 0.5,
    # Seconds one read of a chat turn's engine call may wait (so the pin leaves time for the
    # answers fetch); other callers' reads may wait for what is left of their budget.
    "READ_TIMEOUT": 1.0,
    # Total seconds the engine may cost one chat turn (the pin, the answers fetch, their ack).
    "CHAT_BUDGET": 1.5,
    # Seconds one memory tool call (recall, ask) may wait for the engine.
    "TOOL_BUDGET": 3.0,
    # Seconds an unattended run's engine calls may take in all: a job's head and bundle, a wake's
    # brief. The engine curates them through a vessel, so a brief that takes 10 s is a brief.
    "UNATTENDED_BUDGET": 30.0,
    # Seconds each call of the memory page and its API (listing, forget, scope change,
    # forget-member) may wait for the engine. A management call is rare and its outcome matters,
    # so it is not held to the chat turn's budget.
    "MANAGE_BUDGET": 8.0,
    # How many items a recall asks for.
    "RECALL_LIMIT": 5,
    # Consecutive failures that open the breaker, and seconds until it lets one call through.
    "BREAKER_FAIL_MAX": 3,
    "BREAKER_RESET_TIMEOUT": 30.0,
    # Redis URL to share the breaker's state between processes and hosts; empty: per process.
    "BREAKER_REDIS_URL": "",
    # A block longer than this is refused (pinned absent, reason "block_too_large"), never cut.
    "MAX_BLOCK_CHARS": 16000,
    # Seconds before a chat pinned absent because its block was too large asks the engine again,
    # at its next turn (a forget, or the member's "Bring up to date", asks at the next turn).
    "ABSENT_RETRY_SECONDS": 300.0,
    # An engine answer larger than this is refused while it is read.
    "MAX_RESPONSE_BYTES": 1_000_000,
    # The brain door. Rates are "count/period" (s, min, h, day) counted in the shared cache; empty
    # means no limit. BRAIN_RATE is per signed caller; BRAIN_UNSIGNED_RATE is per address for calls
    # refused before their signature is proved, and past it they are refused with no audit row.
    "BRAIN_SECRET": "",
    "BRAIN_MAX_BODY_BYTES": 256 * 1024,
    "BRAIN_RATE": "120/min",
    "BRAIN_UNSIGNED_RATE": "30/min",
    # Seconds one brain call may take in all (every vessel and repair included), calls one process
    # runs at once (past it: 503 with Retry-After), and the lease a running call holds its
    # webhook-id by (renewed while it runs; a killed call's id is free again once it lapses).
    "BRAIN_DEADLINE": 45.0,
    "BRAIN_MAX_CONCURRENT": 4,
    "BRAIN_LEASE_SECONDS": 15.0,
    # Turn-event delivery: seconds one delivery may take (its budget), full-jitter backoff between attempts
    # (uniform(0, min(max, base * 2**attempts)), a Retry-After wins), and how long an event is
    # retried before it is dead.
    "OUTBOX_DELIVERY_TIMEOUT": 10.0,
    "OUTBOX_BASE_DELAY": 5.0,
    "OUTBOX_MAX_DELAY": 3600.0,
    "OUTBOX_MAX_AGE": 3 * 24 * 3600.0,
    # Seconds past the delivery timeout before a claimed attempt may be tried by another worker:
    # a claim's lease is the two together (20 s), so a worker killed mid-delivery has its events
    # sent again within about 21 s (the lease and one poll). A batch sends for at most this long
    # before it hands its unsent events back, due at once, so it never needs more.
    "OUTBOX_LEASE_MARGIN": 10.0,
    # The delivery worker (`memory_outbox deliver`): seconds between its looks for due events
    # while no commit rings it, how commits ring it (pippa_memory/outbox/doorbell.py: on
    # PostgreSQL always LISTEN/NOTIFY; elsewhere "auto", a Unix socket named after the database,
    # or "host:port" of a UDP datagram; empty: never, polling only), events claimed per batch,
    # and delivery threads.
    "OUTBOX_POLL_INTERVAL": 1.0,
    "OUTBOX_WAKE_ADDRESS": "auto",
    "OUTBOX_BATCH_SIZE": 20,
    "OUTBOX_WORKER_THREADS": 2,
    # Retention (`manage.py prune`, daily from the scheduler): days before brain-door audit rows,
    # delivered turn events and dead ones (from when written or revived) are deleted; 0 keeps them.
    "PRUNE_BRAIN_CALLS_DAYS": 30.0,
    "PRUNE_DELIVERED_EVENTS_DAYS": 7.0,
    "PRUNE_DEAD_EVENTS_DAYS": 30.0,
    # Days before an item's tombstone (recorded at a forget or make-private, so that a block the
    # engine rendered before the change is never pinned) is deleted; 0 keeps them.
    "PRUNE_TOMBSTONES_DAYS": 30.0,
    # Days before a stored memory block that no conversation pins any more is deleted (it may
    # hold a member's private items); 0 keeps them.
    "PRUNE_BLOCKS_DAYS": 7.0,
    # Days before a pin record (the pin history: pins, absent pins, re-pin requests) is deleted;
    # each conversation's newest record and newest pin decision are kept whatever their age (the
    # next turn reads them). 0 keeps them all.
    "PRUNE_PIN_RECORDS_DAYS": 30.0,
    # How often one member may bring a conversation's memory up to date ("Bring up to date",
    # ``POST /api/memory/conversations/<id>/refresh/``): each is one re-pin, one prompt-cache miss
    # and a pin record. Past it: 429 with Retry-After. A rate as the brain door's ("" no limit).
    "REFRESH_RATE": "10/min",
}


def from_environment(env: environ.Env) -> dict[str, Any]:
    """The ``PIPPA_MEMORY_*`` variables that are set, each cast to its default's type (for
    settings.py); a value that is not of that type stops the start, naming the variable."""
    return variables_that_are_set(env, prefix="PIPPA_MEMORY_", defaults=DEFAULTS)


class MemorySettings:
    """Attribute access to ``settings.PIPPA_MEMORY`` with :data:`DEFAULTS` filled in."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown PIPPA_MEMORY setting: {name}")
        return getattr(settings, "PIPPA_MEMORY", {}).get(name, DEFAULTS[name])


memory_settings = MemorySettings()


def why_memory_does_not_apply(conversation: "Conversation") -> str | None:
    """Why memory takes no part in ``conversation``, as the reason its pin records
    (``memory_disabled``: switched off for the household; ``temporary``: a temporary chat, of which
    nothing is remembered), or ``None`` when it does."""
    if not memory_settings.ENABLED:
        return "memory_disabled"
    if conversation.temporary:
        return "temporary"
    return None


def memory_applies(conversation: "Conversation") -> bool:
    """Whether memory takes part in ``conversation``: switched on, and not a temporary chat."""
    return why_memory_does_not_apply(conversation) is None
