"""Forgetting reaches live conversations: after a forget (confirmed by the engine, or not
confirmed and so treated as done, :mod:`pippa_memory.items.changes`), every chat whose pinned
block holds a forgotten item is asked to re-pin at its next turn.

A conversation's pin is a revision; its block is the stored :class:`~pippa_memory.models.MemoryBlock`
of (soul, revision, the conversation's viewer), which lists the ids of the items it holds. For each
block holding a forgotten id, the chats pinned to it get :func:`~pippa_memory.pins.records.request_repin`
with the reason ``forgotten``: their next turn pins the soul's head afresh. That moves the front of
their prompt once, one prompt-cache miss, deliberate and recorded in the pin history. Chats whose
block does not hold the item keep their pin and their bytes. A chat pinned absent because its
block was too large (:func:`repin_absent_chats`) is asked to re-pin too: what made the block too
large may be what was forgotten, and asking again costs it nothing until it pins. Then every block that held the item
and that no conversation pins any more is deleted, so the forgotten text is not kept here.

What this does not remove: the conversation's messages. What was said in a conversation (the
member's words, the reply, the ``remember`` tool use) stays in its history until the conversation
is deleted. Copies of the text that carry no item ids are purged by
:mod:`pippa_memory.forgotten_text`.
"""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from pippa_memory.models import ItemTombstone, MemoryBlock, PinRecord
from pippa_memory.pins.records import ASKED_AGAIN_SPACED, FORGOTTEN, request_repin
from webui.models import Conversation, Soul


@dataclass(frozen=True)
class Repinned:
    """What a forget did here: how many conversations will re-pin, how many blocks were deleted."""

    conversations: int = 0
    blocks_deleted: int = 0
    absent: int = 0


def now() -> datetime:
    return timezone.now()


def blocks_holding(
    *,
    soul: Soul,
    item_ids: set[str],
    sparing_viewer: str | None = None,
    fetched_since: datetime | None = None,
) -> list[MemoryBlock]:
    """The soul's stored blocks that hold any of ``item_ids``, except those rendered for
    ``sparing_viewer``; with ``fetched_since``, also every block stored since then.

    The ids are matched here, not in SQL: JSON containment is not a lookup every database has.
    """
    blocks = MemoryBlock.objects.filter(soul=soul).only(
        "id", "soul_id", "revision", "viewer", "items", "fetched_at"
    )
    if sparing_viewer is not None:
        blocks = blocks.exclude(viewer=sparing_viewer)
    holding = []
    for block in blocks.iterator():
        recent = fetched_since is not None and block.fetched_at >= fetched_since
        if recent or item_ids.intersection(block.items or []):
            holding.append(block)
    return holding


def conversations_pinned_to(block: MemoryBlock) -> QuerySet[Conversation]:
    """The chats whose pin is ``block``: same soul and revision, and the block's viewer (a block
    rendered for no viewer is the one of chats with no member)."""
    pinned = Conversation.objects.filter(
        soul_id=block.soul_id, pinned_head=block.revision, kind=Conversation.Kind.CHAT
    )
    if block.viewer:
        return pinned.filter(viewer__pk=block.viewer)
    return pinned.filter(viewer__isnull=True)


def repin_holders(
    *,
    soul: Soul,
    item_ids: set[str],
    requested_by: AbstractBaseUser,
    reason: str = FORGOTTEN,
    sparing_viewer: str | None = None,
    fetched_since: datetime | None = None,
) -> Repinned:
    """Ask every chat whose pinned block holds any of ``item_ids`` to re-pin at its next turn,
    recording ``reason`` and who asked; then delete those blocks that no conversation pins.

    Call it once the change is done, or treated as done (not refused for sure by the engine).
    ``sparing_viewer`` leaves that member's
    blocks alone (an item made private stays in its sayer's view).
    """
    if not item_ids and fetched_since is None:
        return Repinned()
    blocks = blocks_holding(
        soul=soul, item_ids=item_ids, sparing_viewer=sparing_viewer, fetched_since=fetched_since
    )
    asked = 0
    for block in blocks:
        for conversation in conversations_pinned_to(block).select_related("soul"):
            request_repin(conversation=conversation, requested_by=requested_by, reason=reason)
            asked += 1
    unpinned = [block.pk for block in blocks if not conversations_pinned_to(block).exists()]
    deleted, _ = MemoryBlock.objects.filter(pk__in=unpinned).delete()
    absent = repin_absent_chats(soul=soul, requested_by=requested_by, reason=reason)
    return Repinned(conversations=asked, blocks_deleted=deleted, absent=absent)


def absent_for_a_refused_block(soul: Soul) -> QuerySet[Conversation]:
    """The soul's chats pinned absent whose latest decision refused the engine's block in a way
    only a later try spaced in time would undo (:data:`~pippa_memory.pins.records.ASKED_AGAIN_SPACED`:
    too large)."""
    latest = PinRecord.objects.filter(conversation=OuterRef("pk")).exclude(
        outcome=PinRecord.Outcome.REPIN_REQUESTED
    )
    latest = latest.order_by("-created_at", "-id").values("cause")[:1]
    return (
        Conversation.objects.filter(
            soul=soul,
            kind=Conversation.Kind.CHAT,
            temporary=False,
            pinned_at__isnull=False,
            pinned_head__isnull=True,
        )
        .annotate(absent_for=Subquery(latest))
        .filter(absent_for__in=ASKED_AGAIN_SPACED)
    )


def repin_absent_chats(*, soul: Soul, requested_by: AbstractBaseUser, reason: str) -> int:
    """Ask every chat of ``soul`` pinned absent because its block was too large to pin afresh at
    its next turn, recording ``reason`` (a forget, a make-private) and who asked: a smaller block
    may now fit. Its front moves only if it then pins (once, as any re-pin). Returns how many."""
    asked = 0
    for conversation in absent_for_a_refused_block(soul).select_related("soul"):
        request_repin(conversation=conversation, requested_by=requested_by, reason=reason)
        asked += 1
    return asked


def forget_departed_member(member: str) -> None:
    """A deleted account's traces here: every block rendered for them (it may hold their private
    items) is deleted, and the tombstones that spared them (items they made private) become plain
    forget tombstones, since no block may hold those items now that their owner is gone. Their
    conversations, pins and pending asks go with the account (foreign keys cascade)."""
    MemoryBlock.objects.filter(viewer=member).delete()
    ItemTombstone.objects.filter(spared_viewer=member).update(spared_viewer="")
