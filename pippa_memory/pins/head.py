"""Deciding a pin: ask the engine for the soul's head as the conversation's viewer sees it, refuse
a block that holds a tombstoned item, and pin the conversation to what was decided.

At the first turn one engine call gets the soul's head revision and its block rendered for the
conversation's viewer (household items and that member's private ones; no viewer, household items
only). The block is stored (:mod:`pippa_memory.pins.blocks`) and the revision written on the
conversation row by a conditional update (:func:`~pippa_memory.pins.records.pin_conversation`), so
two concurrent first turns end with one pin. When memory is off, the conversation is temporary, the
engine is unconfigured or down, or its block is too large, the conversation is *pinned absent*, and
the reason is recorded.

A block holding an item forgotten (or made private to someone else) since the engine rendered it is
never pinned: each forget first records a tombstone (:mod:`pippa_memory.pins.tombstones`), and this
step checks the block's items against them before storing it (asking the engine once more; still
stale, the conversation is pinned absent with the reason ``stale_block``, an engine failure, so the
next turn asks again), and once more after its pin is committed.

A block the engine sends for a revision already stored here with other text is a contract failure:
the conversation is pinned absent with the reason ``revision_conflict`` (an engine failure, so the
next turn asks again), never to the engine's text nor to the stored copy.
"""

import logging
import time
from dataclasses import dataclass

from django.db.models import QuerySet

from pippa_memory.conf import memory_settings, why_memory_does_not_apply
from pippa_memory.engine import contract
from pippa_memory.engine.client import call_in_turn
from pippa_memory.engine.members import viewer_id, viewer_query
from pippa_memory.models import MemoryBlock
from pippa_memory.pins.blocks import (
    RevisionConflict,
    holds_tombstoned,
    revision_conflict,
    store_block,
)
from pippa_memory.pins.records import REVISION_CONFLICT, STALE_BLOCK, pin_conversation
from webui.models import Conversation
from webui.text.canonical import without_nul

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PinDecision:
    """What the first turn found: a revision and block, or the reason there is none."""

    revision: str | None
    text: str | None
    reason: str
    latency_ms: int | None
    items: tuple[str, ...] = ()


def decide_pin(conversation: Conversation, *, budget: float | None = None) -> PinDecision:
    """:func:`ask_for_head`, refusing a block that holds a tombstoned item (the engine rendered it
    before a forget it has applied since): the engine is asked once more within ``budget``, and if
    its block is still stale the decision is absent, ``stale_block`` (an engine failure). A block
    for a revision stored here with other text is refused too: absent, ``revision_conflict``."""
    seconds = budget if budget is not None else memory_settings.CHAT_BUDGET
    deadline = time.monotonic() + seconds
    decision = ask_for_head(conversation, budget=seconds)
    if decision.revision is None or not holds_tombstoned(conversation, decision.items):
        return refused_if_conflicting(conversation, decision)
    decision = ask_for_head(conversation, budget=max(0.0, deadline - time.monotonic()))
    if decision.revision is None or not holds_tombstoned(conversation, decision.items):
        return refused_if_conflicting(conversation, decision)
    logger.warning(
        "The engine's block %s for conversation %s still holds a forgotten item; pinned absent.",
        decision.revision,
        conversation.pk,
    )
    return PinDecision(None, None, STALE_BLOCK, decision.latency_ms)


def refused_if_conflicting(conversation: Conversation, decision: PinDecision) -> PinDecision:
    """``decision``, or absent with the reason ``revision_conflict`` when its revision's block is
    stored here with other text (logged once)."""
    if decision.revision is None or not revision_conflict(
        conversation, revision=decision.revision, text=decision.text or ""
    ):
        return decision
    return PinDecision(None, None, REVISION_CONFLICT, decision.latency_ms)


def ask_for_head(conversation: Conversation, *, budget: float) -> PinDecision:
    """Ask the engine for the soul's head as the conversation's viewer sees it, within ``budget``
    (the seconds left in the chat turn's), or say why the conversation goes without a block."""
    left_out = why_memory_does_not_apply(conversation)
    if left_out:
        return PinDecision(None, None, left_out, None)
    soul = conversation.soul
    path = f"/v1/souls/{soul.slug}/head{viewer_query(conversation)}"
    outcome = call_in_turn("GET", path, schema=contract.BLOCK, budget=budget)
    if not outcome.ok:
        return PinDecision(None, None, outcome.reason, outcome.latency_ms)
    data = outcome.data
    if data["soul"] != soul.slug:
        return PinDecision(None, None, "wrong_soul", outcome.latency_ms)
    if data["viewer"] != viewer_id(conversation):
        # Another member's block would show their private items: never pin it.
        return PinDecision(None, None, "wrong_viewer", outcome.latency_ms)
    if len(data["block"]) > memory_settings.MAX_BLOCK_CHARS:
        # Never silently cut: a truncated block would read as the whole memory.
        return PinDecision(None, None, "block_too_large", outcome.latency_ms)
    text = without_nul(data["block"])
    return PinDecision(data["revision"], text, "", outcome.latency_ms, tuple(data["items"]))


def pin_as_decided(
    conversation: Conversation,
    *,
    decision: PinDecision,
    reason: str,
    only_if: QuerySet[Conversation] | None = None,
) -> bool:
    """Store the block ``decision`` found (if any) and pin ``conversation`` to it; then, should
    a tombstone for one of its items have been committed since it was decided, unpin it
    (:func:`unpin_if_tombstoned`)."""
    block = None
    if decision.revision is not None:
        try:
            block = store_block(
                conversation=conversation,
                revision=decision.revision,
                text=decision.text or "",
                items=decision.items,
            )
        except RevisionConflict:
            # Another turn stored this revision since the decision, with other text.
            decision = PinDecision(None, None, REVISION_CONFLICT, decision.latency_ms)
            reason = REVISION_CONFLICT
    won = pin_conversation(
        conversation,
        revision=decision.revision,
        sha256=block.sha256 if block else "",
        reason=reason,
        latency_ms=decision.latency_ms,
        only_if=only_if,
    )
    if won and block is not None:
        unpin_if_tombstoned(conversation, block=block)
    return won


def unpin_if_tombstoned(conversation: Conversation, *, block: MemoryBlock) -> None:
    """Pin ``conversation`` absent (``stale_block``: the next turn asks again) if its just
    committed ``block`` holds a tombstoned item, and delete the block if nothing pins its revision.

    This closes the race with a forget: either this check, made after the pin was committed, sees
    the forget's tombstone, or the tombstone (and so the forget's scan of pinned blocks, which
    follows the engine's answer) came after the pin, and the scan re-pins this conversation.
    """
    if not holds_tombstoned(conversation, block.items):
        return
    logger.warning(
        "Conversation %s was pinned to %s as an item in it was being forgotten; pinned absent.",
        conversation.pk,
        block.revision,
    )
    still_pinned = Conversation.objects.filter(
        pk=conversation.pk, pinned_head=block.revision, pinned_at=conversation.pinned_at
    )
    pin_conversation(
        conversation,
        revision=None,
        sha256="",
        reason=STALE_BLOCK,
        latency_ms=None,
        only_if=still_pinned,
    )
    if not Conversation.objects.filter(soul_id=block.soul_id, pinned_head=block.revision).exists():
        MemoryBlock.objects.filter(pk=block.pk).delete()


def pin_at_first_turn(conversation: Conversation, *, budget: float | None = None) -> bool:
    """Ask the engine for the soul's head and pin ``conversation`` to it, or pin it absent with
    the reason; of two concurrent first turns one pins. Returns whether this call pinned."""
    decision = decide_pin(conversation, budget=budget)
    return pin_as_decided(conversation, decision=decision, reason=decision.reason)
