"""The pinned head: a conversation's memory block is decided once, at its first turn.

At the first turn one engine call gets the soul's head revision and its rendered block; the block
is stored locally (immutable per soul and revision, with its sha256) and the revision is written on
the conversation row by a conditional update, so two concurrent first turns end with one pin. Every
later turn reads the block from the local table with no engine call, so its bytes never move.
When memory is off, the conversation is temporary, the engine is unconfigured or down, or its block
is too large, the conversation is *pinned absent*, and the reason is recorded.

Absent *by choice* (:data:`ABSENT_BY_CHOICE`: memory off, temporary, no engine configured, block too
large) is for life. Absent because the engine failed is not: each later turn asks the engine once
more, within the turn's budget (an open breaker answers at once, with no connection), and the first
time it answers the conversation is pinned, recorded with the reason ``engine_recovered``. That
moves the front of the prompt once, one deliberate prompt-cache miss; afterwards the pin holds for
life like any other.
"""

import logging
from dataclasses import dataclass
from html import escape

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from pippa_memory import contract
from pippa_memory.client import call_engine
from pippa_memory.conf import memory_settings
from pippa_memory.models import MemoryBlock, PinRecord, sha256_of
from webui.canonical import without_nul
from webui.models import Conversation

logger = logging.getLogger(__name__)

#: Why a conversation may be pinned absent for life: a decision, not a failure.
ABSENT_BY_CHOICE = frozenset(
    {"memory_disabled", "temporary", "engine_unconfigured", "block_too_large"}
)
#: The pin history's reason for a conversation pinned at a later turn, once the engine answered.
ENGINE_RECOVERED = "engine_recovered"


@dataclass(frozen=True)
class PinDecision:
    """What the first turn found: a revision and block, or the reason there is none."""

    revision: str | None
    text: str | None
    reason: str
    latency_ms: int | None


def render_block(*, soul_slug: str, revision: str, text: str) -> str:
    """The fixed envelope the block sits in, after the vault base and before the disclosure."""
    return (
        f'<memory soul="{escape(soul_slug)}" revision="{escape(revision)}">\n'
        f"{text.strip()}\n</memory>"
    )


def decide_pin(conversation: Conversation, *, budget: float | None = None) -> PinDecision:
    """Ask the engine for the soul's head, or say why the conversation goes without a block."""
    if not memory_settings.ENABLED:
        return PinDecision(None, None, "memory_disabled", None)
    if conversation.temporary:
        return PinDecision(None, None, "temporary", None)
    soul = conversation.soul
    answer = call_engine("GET", f"/v1/souls/{soul.slug}/head", schema=contract.BLOCK, budget=budget)
    if not answer.ok:
        return PinDecision(None, None, answer.reason, answer.latency_ms)
    data = answer.data
    if data["soul"] != soul.slug:
        return PinDecision(None, None, "wrong_soul", answer.latency_ms)
    if len(data["block"]) > memory_settings.MAX_BLOCK_CHARS:
        # Never silently cut: a truncated block would read as the whole memory.
        return PinDecision(None, None, "block_too_large", answer.latency_ms)
    return PinDecision(data["revision"], without_nul(data["block"]), "", answer.latency_ms)


def store_block(*, conversation: Conversation, revision: str, text: str) -> MemoryBlock:
    """Keep the block for (soul, revision); an existing row wins, since revisions are immutable."""
    digest = sha256_of(text)
    try:
        with transaction.atomic():
            block, created = MemoryBlock.objects.get_or_create(
                soul=conversation.soul, revision=revision, defaults={"text": text, "sha256": digest}
            )
    except IntegrityError:
        block, created = MemoryBlock.objects.get(soul=conversation.soul, revision=revision), False
    if not created and block.sha256 != digest:
        logger.warning(
            "The engine sent different text for %s revision %s; the stored block is kept.",
            conversation.soul.slug,
            revision,
        )
    return block


def pin_conversation(conversation: Conversation, *, budget: float | None = None) -> None:
    """Pin ``conversation`` if nobody has yet; afterwards its ``pinned_*`` fields are current."""
    decision = decide_pin(conversation, budget=budget)
    unpinned = Conversation.objects.filter(pk=conversation.pk, pinned_at__isnull=True)
    settle_pin(conversation, decision=decision, unpinned=unpinned, reason=decision.reason)


def settle_pin(
    conversation: Conversation,
    *,
    decision: PinDecision,
    unpinned: QuerySet[Conversation],
    reason: str,
) -> None:
    """Write ``decision`` if ``unpinned`` (the conversation, still in the state the caller saw)
    matches, with its pin record: a conditional update, so of two racing turns one pins."""
    block = None
    if decision.revision is not None:
        block = store_block(
            conversation=conversation, revision=decision.revision, text=decision.text or ""
        )
    with transaction.atomic():
        won = unpinned.update(pinned_head=decision.revision, pinned_at=timezone.now())
        if won:
            PinRecord.objects.create(
                conversation=conversation,
                soul=conversation.soul,
                outcome=PinRecord.Outcome.PINNED if block else PinRecord.Outcome.ABSENT,
                revision=decision.revision or "",
                sha256=block.sha256 if block else "",
                reason=reason,
                engine_latency_ms=decision.latency_ms,
            )
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])


def absent_because_engine_failed(conversation: Conversation) -> bool:
    """Whether ``conversation`` is pinned absent because the engine failed, so that this turn may
    ask the engine again. False at once (no query) when asking could not help: memory off, a
    temporary chat, no engine configured."""
    if conversation.pinned_at is None or conversation.pinned_head is not None:
        return False
    if not memory_settings.ENABLED or conversation.temporary or not memory_settings.URL:
        return False
    reason = (
        PinRecord.objects.filter(conversation=conversation)
        .exclude(outcome=PinRecord.Outcome.REPIN_REQUESTED)
        .order_by("-created_at", "-id")
        .values_list("reason", flat=True)
        .first()
    )
    return reason is not None and reason not in ABSENT_BY_CHOICE


def repin_after_engine_failure(conversation: Conversation, *, budget: float | None = None) -> None:
    """Ask the engine once more for a conversation pinned absent because it failed.

    An answer with a usable block pins the conversation (reason ``engine_recovered``): the front of
    the prompt moves once, one prompt-cache miss. An answer whose block is refused by choice (too
    large) pins it absent for life. Another failure changes nothing and writes nothing, so a long
    outage does not grow the pin history by a row a turn; the next turn asks again.
    """
    decision = decide_pin(conversation, budget=budget)
    if decision.revision is None and decision.reason not in ABSENT_BY_CHOICE:
        logger.info(
            "Conversation %s stays absent; the engine still fails (%s).",
            conversation.pk,
            decision.reason,
        )
        return
    still_absent = Conversation.objects.filter(
        pk=conversation.pk, pinned_head__isnull=True, pinned_at=conversation.pinned_at
    )
    reason = ENGINE_RECOVERED if decision.revision is not None else decision.reason
    settle_pin(conversation, decision=decision, unpinned=still_absent, reason=reason)


def fetch_block(conversation: Conversation, *, budget: float | None = None) -> MemoryBlock | None:
    """The stored block a pinned conversation needs, fetched by revision if the row went missing."""
    block = MemoryBlock.objects.filter(
        soul_id=conversation.soul_id, revision=conversation.pinned_head
    ).first()
    if block is not None:
        return block
    answer = call_engine(
        "GET",
        f"/v1/souls/{conversation.soul.slug}/blocks/{conversation.pinned_head}",
        schema=contract.BLOCK,
        budget=budget,
    )
    if not answer.ok or answer.data["revision"] != conversation.pinned_head:
        logger.error(
            "Conversation %s is pinned to %s but its block is missing here and at the engine (%s).",
            conversation.pk,
            conversation.pinned_head,
            answer.reason or "revision mismatch",
        )
        return None
    return store_block(
        conversation=conversation,
        revision=conversation.pinned_head,
        text=without_nul(answer.data["block"]),
    )


# Rendered blocks by (soul id, revision). Revisions are immutable, so a process may keep them:
# later turns then cost no query and no engine call for the front of the prompt.
RENDERED: dict[tuple[int, str], str] = {}
RENDERED_MAX = 512


def pinned_block(conversation: Conversation, *, budget: float | None = None) -> str | None:
    """The memory block for this turn of ``conversation``: pinned at the first turn, then reused
    (or, for a conversation absent because the engine failed, pinned at the first turn it answers)."""
    if conversation.pinned_at is None:
        pin_conversation(conversation, budget=budget)
    elif absent_because_engine_failed(conversation):
        repin_after_engine_failure(conversation, budget=budget)
    if conversation.pinned_head is None:
        return None
    key = (conversation.soul_id, conversation.pinned_head)
    if key in RENDERED:
        return RENDERED[key]
    block = fetch_block(conversation, budget=budget)
    if block is None:
        return None
    rendered = render_block(
        soul_slug=conversation.soul.slug, revision=conversation.pinned_head, text=block.text
    )
    if len(RENDERED) >= RENDERED_MAX:
        RENDERED.pop(next(iter(RENDERED)))
    RENDERED[key] = rendered
    return rendered


def request_repin(*, conversation: Conversation, requested_by: object, reason: str) -> PinRecord:
    """Make the conversation pin afresh at its next turn, recording who asked and why.

    This moves the front of the prompt once: the vessel's prompt cache misses on the next turn.
    """
    with transaction.atomic(durable=True):
        record = PinRecord.objects.create(
            conversation=conversation,
            soul=conversation.soul,
            outcome=PinRecord.Outcome.REPIN_REQUESTED,
            revision=conversation.pinned_head or "",
            reason=reason,
            requested_by=requested_by,
        )
        Conversation.objects.filter(pk=conversation.pk).update(pinned_head=None, pinned_at=None)
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return record
