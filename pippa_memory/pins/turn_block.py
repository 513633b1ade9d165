"""The block a chat turn carries: settled before the prompt is assembled, then only read.

:func:`settle_turn_pin`, the plug-in's ``settle`` point, pins at the first turn (or at the turn
after a re-pin was requested), asks the engine once more for a conversation absent because it
failed or its block was refused (:mod:`pippa_memory.pins.repins`), and has the pinned block at
hand: from this process's cache of rendered blocks, from its stored row, or from the engine by
its revision if the row went missing. Wherever the block came from, its items are checked
against the tombstones for its viewer; a block holding one forgotten since (or one the engine
answers ``410 gone`` for) is re-pinned to the head, ``forgotten``. :func:`pinned_block`, which
assembly calls, only reads. Every later turn reads the same block, so the front of the prompt
never moves.
"""

import time
from dataclasses import dataclass

from pippa_memory.conf import memory_settings
from pippa_memory.models import MemoryBlock
from pippa_memory.pins.blocks import (
    BlockGone,
    block_viewer,
    holds_tombstoned,
    refetch_block,
    render_block,
    stored_block,
)
from pippa_memory.pins.head import pin_at_first_turn
from pippa_memory.pins.repins import (
    absence_to_ask_again,
    ask_again_after_absence,
    repin_after_forget,
    repin_cause,
)
from webui.bounded_cache import BoundedCache, text_size
from webui.models import Conversation

#: How many rendered blocks a process keeps, and how many bytes of them at most.
RENDERED_MAX_ENTRIES = 512
RENDERED_MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class RenderedBlock:
    """A pinned block in its envelope, with the ids of the items it holds (for the tombstone
    check every turn makes, whether the block came from this cache or from its row)."""

    text: str
    items: tuple[str, ...]


def rendered_size(rendered: RenderedBlock) -> int:
    return text_size(rendered.text) + sum(text_size(item) for item in rendered.items)


# Rendered blocks by (soul id, revision, viewer). A revision's block for one viewer is immutable,
# so a process may keep them: later turns then cost no engine call and no read of the block's row
# for the front of the prompt. The viewer is part of the key: one member's block never fronts
# another's prompt.
RENDERED: BoundedCache[tuple[int, str, str], RenderedBlock] = BoundedCache(
    max_entries=RENDERED_MAX_ENTRIES, max_bytes=RENDERED_MAX_BYTES, size=rendered_size
)


def rendered_key(conversation: Conversation) -> tuple[int, str, str]:
    return (conversation.soul_id, conversation.pinned_head or "", block_viewer(conversation))


def rendered(conversation: Conversation, block: MemoryBlock) -> RenderedBlock:
    """``conversation``'s pinned ``block`` in its envelope."""
    text = render_block(
        soul_slug=conversation.soul.slug, revision=conversation.pinned_head, text=block.text
    )
    return RenderedBlock(text=text, items=tuple(block.items or ()))


def prepare_block(conversation: Conversation, *, budget: float) -> None:
    """Have a pinned conversation's block rendered in this process's cache: found there, read from
    its row, or asked of the engine by revision (and stored) when the row is missing; nothing is
    cached when the engine cannot give it (logged). Raises :class:`BlockGone` when the engine says
    it is gone or, wherever it came from, it holds an item tombstoned for its viewer."""
    key = rendered_key(conversation)
    found = RENDERED.get(key)
    if found is None:
        block = stored_block(conversation) or refetch_block(conversation, budget=budget)
        if block is None:
            return
        found = rendered(conversation, block)
    if holds_tombstoned(conversation, found.items):
        RENDERED.discard(key)
        raise BlockGone(conversation.pinned_head)
    RENDERED.put(key, found)


def settle_turn_pin(
    conversation: Conversation, *, budget: float | None = None, later_turn: bool = False
) -> str | None:
    """Fix, before a chat turn's prompt is assembled, the block it will carry: pin at the first
    turn (or at the turn after an admin's re-pin); at a later one, ask once more if the
    conversation is absent for a reason other than a choice and due to ask again
    (``engine_recovered``, ``retried``); and have the pinned
    block at hand (:func:`prepare_block`), re-pinned if it must not render (``forgotten``). Every
    engine call here shares ``budget``; afterwards :func:`pinned_block` only reads.

    Returns the cause when it pinned afresh at a ``later_turn`` (the re-pin's, with the admin's
    reason; ``engine_recovered``; ``retried``; ``forgotten``), for the host's cache ledger; else ``None``.
    """
    seconds = budget if budget is not None else memory_settings.CHAT_BUDGET
    deadline = time.monotonic() + seconds
    cause = None
    if conversation.pinned_at is None:
        cause = repin_cause(conversation) if later_turn else None
        pin_at_first_turn(conversation, budget=seconds)
    elif (absence := absence_to_ask_again(conversation)) is not None:
        cause = ask_again_after_absence(conversation, absence=absence, budget=seconds)
    if conversation.pinned_head is None:
        return cause
    try:
        prepare_block(conversation, budget=max(0.0, deadline - time.monotonic()))
    except BlockGone:
        cause = repin_after_forget(conversation, budget=max(0.0, deadline - time.monotonic()))
        block = stored_block(conversation) if conversation.pinned_head is not None else None
        if block is not None:
            RENDERED.put(rendered_key(conversation), rendered(conversation, block))
    return cause


def pinned_block(conversation: Conversation) -> str | None:
    """The memory block this turn of ``conversation`` carries, as :func:`settle_turn_pin` fixed it:
    ``None`` when pinned absent (or its block is missing, which settling logged). Only reads: no
    engine call, no write; once rendered in this process, no query either."""
    if conversation.pinned_head is None:
        return None
    found = RENDERED.get(rendered_key(conversation))
    if found is not None:
        return found.text
    block = stored_block(conversation)
    return rendered(conversation, block).text if block is not None else None
