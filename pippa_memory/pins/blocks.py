"""Stored blocks: a soul's memory block at one revision, rendered for one viewer, kept as a row.

A revision's block for one viewer is immutable, so it is stored once (:func:`store_block`, with
its sha256 and the ids of its items) and read from its row for the life of every conversation
pinned to it (:func:`stored_block`). Should the row go missing, the engine is asked for that
revision again (:func:`refetch_block`); it answers ``410 gone`` for a block holding an item since
forgotten (:class:`BlockGone`). A block whose items include one tombstoned for its viewer
(:func:`holds_tombstoned`) must never be pinned or rendered, wherever it was found.

A revision names one state for ever. An engine that sends, for a revision stored here, a block
with other text has broken that contract (an engine that lost its state and counts revisions
again, say): neither its text nor the stored copy is pinned (:func:`revision_conflict`,
:class:`RevisionConflict`), and the log says so once per process for that revision and viewer.
"""

import logging
import threading
from html import escape

from django.db import IntegrityError, transaction

from pippa_memory.engine import contract
from pippa_memory.engine.client import call_in_turn
from pippa_memory.engine.members import viewer_id, viewer_query
from pippa_memory.member_text_hash import digest_matches, keyed_sha256
from pippa_memory.models import MemoryBlock
from pippa_memory.pins.tombstones import tombstoned_items
from webui.bounded_cache import BoundedCache
from webui.models import Conversation
from webui.text.canonical import without_nul

logger = logging.getLogger(__name__)


class BlockGone(Exception):
    """A pinned block that must not render: the engine answered ``410 gone`` for it, or it holds
    an item since forgotten (or made private to someone else)."""


class RevisionConflict(Exception):
    """The engine sent a block for a revision stored here for the same viewer with other text."""


#: The (soul id, revision, viewer) of each revision conflict this process has logged, so the log
#: says so once rather than at every turn that meets it again.
REPORTED_CONFLICTS: BoundedCache[tuple[int, str, str], bool] = BoundedCache(
    max_entries=1024, max_bytes=1024, size=lambda _: 1
)
_REPORTING = threading.Lock()


def block_viewer(conversation: Conversation) -> str:
    """The viewer key of ``conversation``'s blocks: its member's id, "" for household only."""
    return viewer_id(conversation) or ""


def render_block(*, soul_slug: str, revision: str, text: str) -> str:
    """The fixed envelope the block sits in, after the vault base and before the disclosure."""
    return (
        f'<memory soul="{escape(soul_slug)}" revision="{escape(revision)}">\n'
        f"{text.strip()}\n</memory>"
    )


def holds_tombstoned(conversation: Conversation, items: tuple[str, ...] | list[str]) -> bool:
    """Whether a block for ``conversation``'s viewer holding ``items`` holds one forgotten, or made
    private to someone else, since: a block that must not be pinned or rendered. No query for a
    block with no items."""
    return bool(
        tombstoned_items(
            soul_id=conversation.soul_id, viewer=block_viewer(conversation), items=items
        )
    )


def revision_conflict(conversation: Conversation, *, revision: str, text: str) -> bool:
    """Whether the block for (soul, ``revision``, the conversation's viewer) is stored here with
    text other than ``text``: the engine broke its contract, and neither may be pinned. Logged
    once per process for that revision and viewer. Only reads."""
    stored = MemoryBlock.objects.filter(
        soul_id=conversation.soul_id, revision=revision, viewer=block_viewer(conversation)
    )
    digest = stored.values_list("sha256", flat=True).first()
    if digest is None or digest_matches(digest, text):
        return False
    # Keyed under a key since dropped, the hash cannot tell: the text itself can (rare, one read).
    if stored.filter(text=text).exists():
        return False
    report_revision_conflict(conversation, revision=revision)
    return True


def report_revision_conflict(conversation: Conversation, *, revision: str) -> None:
    """Log, once per process for this revision and viewer, that the engine reused ``revision``."""
    key = (conversation.soul_id, revision, block_viewer(conversation))
    with _REPORTING:
        if key in REPORTED_CONFLICTS:
            return
        REPORTED_CONFLICTS.put(key, True)
    logger.error(
        "The engine sent different text for %s revision %s, whose block is stored here: it "
        "broke its contract (a revision names one state for ever). Conversations it would pin "
        "there are pinned absent (revision_conflict) until the engine names a new revision; "
        "the stored block is not pinned either.",
        conversation.soul.slug,
        revision,
    )


def store_block(
    *, conversation: Conversation, revision: str, text: str, items: tuple[str, ...] | list[str]
) -> MemoryBlock:
    """Store the block for (soul, revision, the conversation's viewer) with its item ids; an
    existing row with the same text is returned, since a revision's block for one viewer is
    immutable. Raises :class:`RevisionConflict` (logged once) when the row holds other text."""
    digest = keyed_sha256(text)
    key = {"soul": conversation.soul, "revision": revision, "viewer": block_viewer(conversation)}
    try:
        with transaction.atomic():
            block, created = MemoryBlock.objects.get_or_create(
                **key, defaults={"text": text, "sha256": digest, "items": list(items)}
            )
    except IntegrityError:
        block, created = MemoryBlock.objects.get(**key), False
    if not created and block.text != text:
        report_revision_conflict(conversation, revision=revision)
        raise RevisionConflict(revision)
    return block


def stored_block(conversation: Conversation) -> MemoryBlock | None:
    """The stored block of ``conversation``'s pin, for its viewer; ``None`` when not stored. Only
    reads."""
    return MemoryBlock.objects.filter(
        soul_id=conversation.soul_id,
        revision=conversation.pinned_head,
        viewer=block_viewer(conversation),
    ).first()


def refetch_block(conversation: Conversation, *, budget: float) -> MemoryBlock | None:
    """Ask the engine for a pinned conversation's block by its revision, for its viewer, and store
    it: for a block whose row went missing here. ``None`` (logged) when the engine cannot give it;
    raises :class:`BlockGone` when the engine answers that the block is gone."""
    soul, revision = conversation.soul.slug, conversation.pinned_head
    path = f"/v1/souls/{soul}/blocks/{revision}{viewer_query(conversation)}"
    outcome = call_in_turn("GET", path, schema=contract.BLOCK, budget=budget)
    if outcome.status == 410:
        raise BlockGone(conversation.pinned_head)
    if (
        not outcome.ok
        or outcome.data["revision"] != conversation.pinned_head
        or outcome.data["viewer"] != viewer_id(conversation)
    ):
        logger.error(
            "Conversation %s is pinned to %s but its block is missing here and at the engine (%s).",
            conversation.pk,
            conversation.pinned_head,
            outcome.reason or "revision or viewer mismatch",
        )
        return None
    try:
        return store_block(
            conversation=conversation,
            revision=conversation.pinned_head,
            text=without_nul(outcome.data["block"]),
            items=outcome.data["items"],
        )
    except RevisionConflict:
        return None  # another turn stored the revision meanwhile, with other text: logged
