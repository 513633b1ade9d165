"""The reference engine's memory, kept in its own database: what souls left behind, who may see
it, asks and answers.

Memories come from the ``remember`` tool uses of the turn events it receives, each with the
scope the plug-in resolved, the member who said it and where; every change (remember, forget, a
scope change) moves the soul's head revision. Every read is for a viewer: household items plus
that viewer's private items, or household items only for an unattended run. Every change is
committed (:mod:`.storage`) before the method returns, so before anyone is answered.
"""

import hashlib
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from reference_engine import keeping
from reference_engine.backfill import Backfill
from reference_engine.block_budget import HEADING_ROOM, bundle_heading
from reference_engine.blocks import block_body
from reference_engine.brain_client import BrainClient
from reference_engine.config import DEFAULTS
from reference_engine.cursors import BadCursor, cursor_position, known_number
from reference_engine.events import NewMemory, remembered_by_event
from reference_engine.meaning import MeaningIndex
from reference_engine.recall import for_version_2, recall_body
from reference_engine.souls import Memory, UnknownItem, now_iso, words_of
from reference_engine.storage import asks as ask_rows
from reference_engine.storage import memories as rows
from reference_engine.storage.database import Database
from reference_engine.storage.ingest import record_turn
from reference_engine.storage.language import use_language
from reference_engine.storage.revisions import head_number, revision_name
from reference_engine.storage.schema import migrate
from reference_engine.thinking import Thinker

__all__ = ["BadCursor", "EngineState", "cursor_position", "known_number", "now_iso"]
PAGE_LIMITS = range(1, 101)


class EngineState:
    """One engine's memory in ``database``, safe to share between threads and processes.

    ``clock`` (wall-clock seconds, so it means the same after a restart) says when asks are
    ready; a test may replace it to make time pass. ``brain`` is the brain door asks, briefs and
    curation are thought through (:mod:`.thinking`); with none configured they say so.
    ``block_chars`` is the budget every block, brief and bundle is rendered within
    (:mod:`.block_budget`).
    """

    def __init__(
        self,
        database: Database,
        *,
        answer_delay: float = DEFAULTS.answer_delay,
        brain: BrainClient | None = None,
        block_chars: int = DEFAULTS.block_chars,
        recall: str = DEFAULTS.recall,
        language: str = DEFAULTS.language,
        decide_confidence: float = DEFAULTS.decide_confidence,
    ) -> None:
        self.database = database
        self.decide_confidence = decide_confidence
        self.recall_mode = recall
        self.language = language
        self.meaning = MeaningIndex()
        self.clock: Callable[[], float] = time.time
        self.answer_delay = answer_delay
        self.block_chars = block_chars
        migrate(database)
        use_language(database, language)
        self.backfill = Backfill(database)
        self.thinker = Thinker(self, brain or BrainClient("", ""))

    def clear(self) -> None:
        with self.database.write() as cursor:
            ask_rows.clear_all(cursor)

    # -- inspection, for tests and the demo -----------------------------------------------------
    @property
    def souls(self) -> "SoulViews":
        return SoulViews(self)

    @property
    def events(self) -> list[str]:
        """The ids of every turn event recorded, in the order they arrived."""
        with self.database.read() as cursor:
            return ask_rows.event_ids(cursor)

    def holds_memories(self, soul: str) -> bool:
        """True when ``soul`` keeps at least one memory (one row read, however many it keeps)."""
        with self.database.read() as cursor:
            return rows.holds_memories(cursor, soul)

    def head(self, soul: str) -> str:
        with self.database.read() as cursor:
            return revision_name(head_number(cursor, soul))

    # -- memories and revisions ----------------------------------------------------------------
    def remember(
        self,
        soul: str,
        text: str,
        *,
        scope: str = "household",
        member: str | None = None,
        name: str | None = None,
        source: dict[str, Any] | None = None,
    ) -> str:
        """Add a memory said by ``member`` (None: an unattended run); returns the new head.

        A private memory needs a member (:class:`~.souls.NoOwner`); a bad scope is a ValueError.
        """
        said_by = {"member": member, "name": name or member} if member else None
        with self.database.write() as cursor:
            head, _ = rows.keep_memory(cursor, soul, NewMemory(text, scope, said_by, source or {}))
        return revision_name(head)

    def block(
        self, soul: str, revision: str | None = None, *, viewer: str | None = None
    ) -> dict[str, Any]:
        """The block body of ``revision`` (the head when None) for ``viewer``, within the
        budget (an unattended run's leaves room for a bundle's heading), with ``left_out``.

        Raises :class:`~.souls.UnknownRevision` or :class:`~.souls.RevisionGone`.
        """
        number = None if revision is None else known_number(revision)
        budget = self.block_chars - (HEADING_ROOM if viewer is None else 0)
        return block_body(self.database, soul, number, viewer, budget=budget)

    def recall(
        self, soul: str, query: str, limit: int, *, viewer: str | None = None, version: int = 3
    ) -> dict[str, Any]:
        """The visible memories ranked by the words and the meaning of ``query`` (words only
        with ``--recall words``, or for a version 2 caller), or the most recent, saying so."""
        meaning = self.recall_mode == "meaning" and version >= 3
        body = recall_body(
            self.database,
            self.meaning,
            soul,
            query,
            limit,
            viewer=viewer,
            meaning=meaning,
            language=self.language,
        )
        return body if version >= 3 else for_version_2(body)

    # -- management ---------------------------------------------------------------------------
    def items(
        self,
        soul: str,
        *,
        viewer: str | None,
        q: str = "",
        limit: int = 20,
        cursor: str = "",
        orphaned: bool = False,
    ) -> dict[str, Any]:
        """One page of the items ``viewer`` may see, newest first, holding every word of ``q``:
        current items, or with ``orphaned`` replaced items no current memory they see replaced.

        ``cursor`` is a previous page's ``next``; a cursor this engine never gave is a
        :class:`BadCursor`, and a limit outside 1..100 a ValueError.
        """
        if limit not in PAGE_LIMITS:
            raise ValueError("limit must be an integer from 1 to 100")
        before = cursor_position(cursor)
        with self.database.read() as db:
            found = rows.page_of_items(
                db,
                soul,
                viewer=viewer,
                words=words_of(q),
                before=before,
                limit=limit + 1,
                orphaned=orphaned,
            )
            head = revision_name(head_number(db, soul))
            page = found[:limit]
            items = keeping.shown(db, page, viewer=viewer)
        more = len(found) > limit
        return {
            "items": items,
            "next": f"before-{page[-1].seq}" if more else None,
            "revision": head,
        }

    def members(self, soul: str) -> dict[str, Any]:
        """Every member who said something the soul keeps, with a count of their private items."""
        with self.database.read() as cursor:
            members = rows.members_of(cursor, soul)
            head = revision_name(head_number(cursor, soul))
        return {"members": members, "revision": head}

    def item(self, soul: str, item_id: str, *, viewer: str | None) -> dict[str, Any]:
        """One item ``viewer`` may see (else :class:`~.souls.UnknownItem`), with the head."""
        with self.database.read() as cursor:
            return keeping.item_body(cursor, soul, item_id, viewer)

    def add_item(
        self, soul: str, text: Any, *, scope: str, viewer: str | None, name: str | None = None
    ) -> dict[str, Any]:
        """Keep a memory ``viewer`` gives on the memory page, as ``remember`` would."""
        return keeping.add(self, soul, text, scope=scope, member=viewer, name=name)

    def correct_item(
        self, soul: str, item_id: str, text: Any, *, viewer: str | None, name: str | None = None
    ) -> dict[str, Any]:
        """New words replacing one current item ``viewer`` may see (:mod:`.keeping`)."""
        return keeping.correct(self, soul, item_id, text, viewer=viewer, name=name)

    def restore_item(self, soul: str, item_id: str, *, viewer: str | None) -> dict[str, Any]:
        """A replaced item ``viewer`` may see made current again (:mod:`.keeping`)."""
        return keeping.restore(self, soul, item_id, viewer=viewer)

    def forget(
        self, soul: str, item_id: str, *, viewer: str | None, again_ok: bool = False
    ) -> dict[str, Any]:
        """Forget one item ``viewer`` may see (else :class:`~.souls.UnknownItem`).

        With ``again_ok``, an item already forgotten that ``viewer`` could see is a success
        (nothing changes), so a caller that lost the first answer may safely retry.
        """
        with self.database.write() as cursor:
            try:
                memory = rows.find_memory(cursor, soul, item_id, viewer=viewer)
            except UnknownItem:
                if again_ok and rows.was_forgotten(cursor, soul, item_id, viewer=viewer):
                    return {
                        "forgotten": item_id,
                        "revision": revision_name(head_number(cursor, soul)),
                    }
                raise
            rows.forget_memories(cursor, soul, [memory.seq])
            ask_rows.drop_answers_built_on(cursor, soul, [memory.id])
            head = revision_name(head_number(cursor, soul))
        return {"forgotten": item_id, "revision": head}

    def change_item(
        self,
        soul: str,
        item_id: str,
        *,
        viewer: str | None,
        scope: str | None = None,
        keep: bool | None = None,
    ) -> dict[str, Any]:
        """Change the scope (None: as it is) and the *keep in every chat* mark (None: as it is)
        of one item ``viewer`` may see, in one transaction; each change moves the head, and
        asking for what the item has changes nothing."""
        with self.database.write() as cursor:
            memory = rows.find_memory(cursor, soul, item_id, viewer=viewer)
            if scope is not None:
                rows.rescope_memory(cursor, soul, memory, scope)
            if scope == "private":  # its answers to anyone but its owner are taken back
                ask_rows.drop_answers_built_on(
                    cursor, soul, [memory.id], spared_viewer=memory.owner
                )
            if keep is not None:
                rows.mark_kept(cursor, soul, memory, keep)
            head = revision_name(head_number(cursor, soul))
        return {"item": memory.item(), "revision": head}

    def forget_member(self, soul: str, member: str) -> dict[str, Any]:
        """Forget every item ``member`` said, private and household; ``ids`` names them."""
        with self.database.write() as cursor:
            doomed = rows.member_items(cursor, soul, member)
            rows.forget_memories(cursor, soul, [seq for seq, _ in doomed])
            ask_rows.drop_answers_built_on(cursor, soul, [i for _, i in doomed])
            head = revision_name(head_number(cursor, soul))
        return {"forgotten": len(doomed), "ids": [i for _, i in doomed], "revision": head}

    # -- events -------------------------------------------------------------------------------
    def record_event(self, event: dict[str, Any]) -> bool:
        """Record a turn event once; False when its id was seen before (nothing happens again).

        A malformed event is a ValueError or KeyError, and nothing of it is kept.
        """
        return record_turn(
            self.database,
            event_id=str(event["id"]),
            soul=str(event["soul"]),
            received_at=now_iso(),
            kept=remembered_by_event(event),
        )

    # -- asks ---------------------------------------------------------------------------------
    def ask(self, soul: str, conversation: str, question: str, *, viewer: str | None = None) -> str:
        """Take a question (a row at once); it is answered later from what ``viewer`` may see."""
        ask_id = f"ask_{uuid.uuid4().hex[:16]}"
        ask = {
            "id": ask_id,
            "soul": soul,
            "conversation": conversation,
            "question": question,
            "viewer": viewer,
            "asked_at": now_iso(),
            "ready_at": self.clock() + self.answer_delay,
        }
        with self.database.write() as cursor:
            ask_rows.add_ask(cursor, ask)
        self.thinker.wake()
        return ask_id

    def answers(self, conversation: str) -> list[dict[str, Any]]:
        """The conversation's unacknowledged answers that are ready, each with the ids of the
        memories it was made from (``items``); each is written once.

        With a brain door, the thinker's worker writes them (never this request); without one,
        an answer needs no judgement, so a ready ask is answered here, saying so.
        """
        with self.database.read() as cursor:
            asks = ask_rows.open_asks(cursor, conversation)
        ready = [a for a in asks if a["answer_id"] or self.clock() >= a["ready_at"]]
        if self.thinker.background:
            ready = [a for a in ready if a["answer_id"]]
        unanswered = [a for a in ready if not a["answer_id"]]
        for ask in unanswered:
            self.thinker.answer_now(ask)
        if unanswered:  # another request may have written first: read what was kept
            with self.database.read() as cursor:
                kept = {a["id"]: a for a in ask_rows.open_asks(cursor, conversation)}
            ready = [kept[a["id"]] for a in ready if a["id"] in kept]
        return [
            {
                "id": a["answer_id"],
                "ask_id": a["id"],
                "question": a["question"],
                "answer": a["answer"],
                "answered_at": a["answered_at"],
                "items": a["answer_items"],
            }
            for a in ready
            if a["answer_id"]
        ]

    def ack(self, conversation: str, ids: list[str]) -> None:
        with self.database.write() as cursor:
            ask_rows.acknowledge(cursor, conversation, ids)

    # -- unattended runs: household items only ------------------------------------------------
    def brief(self, soul: str) -> dict[str, Any]:
        """A wake's brief, curated through the brain door, else marked as a fallback."""
        return self.thinker.brief(soul)

    def bundle(self, soul: str, job: dict[str, Any], revision: str | None) -> dict[str, Any]:
        """The job's bundle at ``revision`` (the head when None), from household items only.

        Raises :class:`~.souls.UnknownRevision` or :class:`~.souls.RevisionGone`.
        """
        found = self.block(soul, revision)
        bundle = bundle_heading(job, found["revision"]) + found["block"]
        digest = hashlib.sha256(bundle.encode("utf-8")).hexdigest()
        return {
            "bundle": bundle,
            "revision": found["revision"],
            "sha256": digest,
            "items": found["items"],
            "viewer": None,
        }


class SoulView:
    """What one soul holds now, read from the database when asked (for tests and the demo)."""

    def __init__(self, state: EngineState, soul: str) -> None:
        self.state, self.soul = state, soul

    @property
    def memories(self) -> list[Memory]:
        with self.state.database.read() as cursor:
            return rows.live_memories(cursor, self.soul)

    @property
    def head(self) -> str:
        return self.state.head(self.soul)


class SoulViews:
    """``state.souls[soul]``: a :class:`SoulView`; ``get`` is None for a soul never changed."""

    def __init__(self, state: EngineState) -> None:
        self.state = state

    def __getitem__(self, soul: str) -> SoulView:
        return SoulView(self.state, soul)

    def get(self, soul: str) -> SoulView | None:
        with self.state.database.read() as cursor:
            changed = head_number(cursor, soul) > 0
        return SoulView(self.state, soul) if changed else None

    def __iter__(self) -> Iterator[str]:
        with self.state.database.read() as cursor:
            return iter([row[0] for row in cursor.run("SELECT soul FROM engine_souls").all()])
