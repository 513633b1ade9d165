"""What one conversation's memory holds, for its own member: "Pippa's memory in this chat".

A chat's memory block is pinned at its first turn and never moves on its own (the prompt cache
depends on it), so a member who remembers something in another chat and comes back here finds
that Pippa here does not know it. This module says what the pinned block holds (the ids its
stored :class:`~pippa_memory.models.MemoryBlock` row names, read as text from the member's own
listing at the engine), how many memories the member may see came after the pin, and lets the
member bring the chat up to date deliberately: one recorded re-pin (reason ``member_refresh``),
one prompt-cache miss at the next turn.

Privacy between members: every item shown comes from the listing the engine gives the
conversation's own member (household items and that member's private ones), checked again by
:func:`~pippa_memory.items.services.visible_items`; an id of the block that is not in that
listing (forgotten since, or made private by someone else) is not shown. Only the conversation's
member is ever asked for (the views 404 anyone else).
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser

from pippa_memory.items import services
from pippa_memory.models import MemoryBlock, PinRecord
from pippa_memory.pins.records import request_repin
from webui.models import Conversation

#: The reason a member's own "Bring up to date" writes in the pin history.
MEMBER_REFRESH = "member_refresh"
#: The listing is read a page of 100 at a time, at most this many pages, newest first.
LISTING_PAGES = 10
#: What a refresh costs, in the words the page and the API give.
REFRESH_COST = (
    "Bringing it up to date makes the next reply start afresh once: it costs one prompt-cache "
    "miss, so that reply may be a little slower."
)


class State:
    """Where a conversation's memory stands."""

    PINNED = "pinned"  # a block is pinned (it may hold nothing)
    ABSENT = "absent"  # pinned with no memory (memory off, engine out of reach at its first turn)
    TOO_LARGE = "too_large"  # no memory: the engine's block (or answer) was too large to bring in
    UNUSABLE = "unusable"  # no memory: the engine answered with something that could not be used
    WAITING = "waiting"  # no pin yet: the next message takes the memory as it is then
    TEMPORARY = "temporary"  # a temporary chat: nothing is remembered


#: The state of a chat pinned absent, by the cause on its record; any other cause is ``absent``.
ABSENT_STATES = {
    PinRecord.Cause.BLOCK_TOO_LARGE: State.TOO_LARGE,
    PinRecord.Cause.ANSWER_TOO_LARGE: State.TOO_LARGE,
    PinRecord.Cause.UNUSABLE_ANSWER: State.UNUSABLE,
    PinRecord.Cause.GONE: State.UNUSABLE,
    PinRecord.Cause.STALE_BLOCK: State.UNUSABLE,
    PinRecord.Cause.REVISION_CONFLICT: State.UNUSABLE,
}


@dataclass(frozen=True)
class ConversationMemory:
    """What ``conversation``'s memory holds for its member, and a sentence that says so."""

    state: str
    summary: str
    pinned_at: datetime | None = None
    revision: str | None = None
    items: list[services.MemoryItem] = field(default_factory=list)
    newer: int = 0


def pinned_item_ids(conversation: Conversation) -> list[str]:
    """The ids of the items the conversation's stored block holds (none when it is not stored)."""
    block = (
        MemoryBlock.objects.filter(
            soul_id=conversation.soul_id,
            revision=conversation.pinned_head,
            viewer=str(conversation.viewer_id or ""),
        )
        .values_list("items", flat=True)
        .first()
    )
    return list(block or [])


def absent_state(conversation: Conversation) -> tuple[str, str]:
    """The state of a chat pinned absent, and the sentence that says why, from its latest absent
    record: never that memory could not be reached when the engine answered."""
    cause = (
        PinRecord.objects.filter(conversation=conversation, outcome=PinRecord.Outcome.ABSENT)
        .values_list("cause", flat=True)
        .first()
    )
    soul = conversation.soul.name
    state = ABSENT_STATES.get(cause, State.ABSENT)
    if state == State.TOO_LARGE:
        return state, (
            f"This chat's memory was too large to bring in, so {soul} has none in it. She tries "
            "again a little later; forgetting something, or bringing this chat up to date, "
            "makes her try at your next message."
        )
    if state == State.UNUSABLE:
        return state, (
            f"{soul}'s memory sent something she could not use when this chat began, so she "
            "brought none into it. She tries again at your next message."
        )
    if cause == PinRecord.Cause.MEMORY_DISABLED:
        return (
            state,
            f"Memory was switched off when this chat began, so {soul} brought none into it.",
        )
    if cause == PinRecord.Cause.ENGINE_UNCONFIGURED:
        return state, f"No memory was set up when this chat began, so {soul} brought none into it."
    if cause == PinRecord.Cause.ENGINE_ERROR:
        return state, (
            f"{soul}'s memory was not working when this chat began, so she brought none into "
            "it. She tries again at your next message."
        )
    return state, (
        f"{soul}'s memory could not be reached when this chat began, so she brought none into "
        "it. She tries again at your next message."
    )


def _waiting_summary(conversation: Conversation) -> str:
    soul = conversation.soul.name
    if conversation.messages.exists():
        return f"{soul} takes her memory afresh at your next message."
    return f"{soul} takes her memory as it is now at your first message."


def read_listing(
    *, conversation: Conversation, user: AbstractBaseUser, holds: set[str]
) -> tuple[list[services.MemoryItem], int]:
    """The items of ``holds`` that ``user`` may see, newest first, and how many others they may
    see came after the pin; read from ``user``'s own listing until both are known.

    "After the pin" is by the item's time against the pin's, to the second (the contract's
    times may carry no more): an item the block does not hold and that is older is not news."""
    items: list[services.MemoryItem] = []
    newer, cursor = 0, ""
    since = conversation.pinned_at.replace(microsecond=0)
    for _ in range(LISTING_PAGES):
        page = services.fetch_items_page(
            soul=conversation.soul, user=user, cursor=cursor, limit=100
        )
        for item in page.items:
            if item.id in holds:
                items.append(item)
            elif item.at is not None and item.at >= since:
                newer += 1
        oldest = page.items[-1].at if page.items else None
        all_found = len(items) == len(holds)
        if not page.next or (all_found and oldest is not None and oldest < since):
            break
        cursor = page.next
    return items, newer


def conversation_memory(
    *, conversation: Conversation, user: AbstractBaseUser
) -> ConversationMemory:
    """What ``conversation`` (``user``'s own chat) was given of the soul's memory.

    Raises :class:`~pippa_memory.items.services.MemoryRefusal` (``memory_unavailable``) when the
    engine must be asked and cannot answer, or memory is switched off.
    """
    soul = conversation.soul.name
    if conversation.temporary:
        summary = f"A temporary chat: {soul} brings no memory into it and keeps nothing from it."
        return ConversationMemory(state=State.TEMPORARY, summary=summary)
    if conversation.pinned_at is None:
        return ConversationMemory(state=State.WAITING, summary=_waiting_summary(conversation))
    holds = set(pinned_item_ids(conversation)) if conversation.pinned_head else set()
    items, newer = read_listing(conversation=conversation, user=user, holds=holds)
    if not conversation.pinned_head:
        state, summary = absent_state(conversation)
        return ConversationMemory(
            state=state,
            summary=summary,
            pinned_at=conversation.pinned_at,
            newer=newer,
        )
    return ConversationMemory(
        state=State.PINNED,
        summary=f"What {soul} knew when this chat began.",
        pinned_at=conversation.pinned_at,
        revision=conversation.pinned_head,
        items=items,
        newer=newer,
    )


def refresh_conversation(*, conversation: Conversation, user: AbstractBaseUser) -> PinRecord:
    """Bring ``conversation`` up to date at its next turn: one recorded re-pin, reason
    :data:`MEMBER_REFRESH`, asked for by ``user``. That turn costs one prompt-cache miss.

    Raises :class:`~pippa_memory.items.services.MemoryRefusal`: ``not_remembered`` (409) for a
    temporary chat, ``memory_unavailable`` (503) when memory is off or the engine does not
    answer, so nothing changes and the chat keeps the memory it has.
    """
    if conversation.temporary:
        raise services.MemoryRefusal(
            code="not_remembered",
            message="A temporary chat has no memory to bring up to date.",
            status=409,
        )
    # Asked first: a re-pin while the engine is down would leave the next turn with no memory.
    services.fetch_items_page(soul=conversation.soul, user=user, limit=1)
    return request_repin(conversation=conversation, requested_by=user, reason=MEMBER_REFRESH)
