"""The reference engine's memory: what souls left behind, who may see it, asks and answers.

Memories come from the ``remember`` tool uses of the turn events it receives, each with the
scope the plug-in resolved, the member who said it and where; every change (remember, forget, a
scope change) moves the soul's head revision. Every read is for a viewer: household items plus
that viewer's private items, or household items only for an unattended run. Recall matches words
of the query and, when nothing matches, falls back to the most recent visible memories and says
so. Asks are answered after a short delay. Bundles and blocks for a revision are deterministic.
"""

import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_engine.events import remembered_by_event
from reference_engine.souls import (
    STOP_WORDS,
    SoulMemory,
    now_iso,
    words_of,
)

__all__ = ["EngineState", "now_iso"]
PAGE_LIMITS = range(1, 101)


class BadCursor(ValueError):
    """A listing cursor this engine did not hand out."""


@dataclass
class Ask:
    ask_id: str
    soul: str
    conversation: str
    question: str
    viewer: str | None
    ready_at: float
    answer_id: str = ""
    answer: str = ""
    answered_at: str = ""
    acked: bool = False


class EngineState:
    """In-memory state for one reference engine, safe to share between the server's threads.

    Every read and change of the state holds one re-entrant lock, so a request sees no other
    request's change half made (an event and the memories it leaves, an answer being written).
    ``clock`` says when asks are ready; a test may replace it to make time pass.
    """

    def __init__(self, *, answer_delay: float = 1.0) -> None:
        self.lock = threading.RLock()
        self.clock: Callable[[], float] = time.monotonic
        self.answer_delay = answer_delay
        self.souls: dict[str, SoulMemory] = {}
        self.events: dict[str, dict[str, Any]] = {}
        self.asks: dict[str, Ask] = {}

    def clear(self) -> None:
        with self.lock:
            self.souls.clear()
            self.events.clear()
            self.asks.clear()

    def _soul(self, soul: str) -> SoulMemory:
        if soul not in self.souls:
            self.souls[soul] = SoulMemory()
        return self.souls[soul]

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
        with self.lock:
            state = self._soul(soul)
            state.add(text=text, scope=scope, said_by=said_by, source=source or {})
            return state.head

    def block(
        self, soul: str, revision: str | None = None, *, viewer: str | None = None
    ) -> dict[str, Any]:
        """The block answer of ``revision`` (the head when None) for ``viewer``.

        Raises :class:`~.souls.UnknownRevision` or :class:`~.souls.RevisionGone`.
        """
        with self.lock:
            state = self._soul(soul)
            revision = revision or state.head
            ids, text = state.block(revision, viewer=viewer)
        return {"soul": soul, "revision": revision, "viewer": viewer, "block": text, "items": ids}

    def recall(
        self, soul: str, query: str, limit: int, *, viewer: str | None = None
    ) -> dict[str, Any]:
        """The visible memories matching words of ``query``, or the most recent, saying so."""
        words = words_of(query) - STOP_WORDS
        with self.lock:
            memories = self._soul(soul).visible(viewer)
        hits = [m for m in memories if words & words_of(m.text)]
        if hits:
            items = hits[-limit:]
            return {"match": "exact", "items": [m.item() for m in items], "fallback": None}
        recent = memories[-limit:]
        return {
            "match": "fallback",
            "items": [m.item() for m in recent],
            "fallback": {
                "from": f"memories matching {query!r}",
                "to": f"the {len(recent)} most recent memories",
                "reason": "no memory matched the query",
            },
        }

    # -- management ---------------------------------------------------------------------------
    def items(
        self, soul: str, *, viewer: str | None, q: str = "", limit: int = 20, cursor: str = ""
    ) -> dict[str, Any]:
        """One page of the items ``viewer`` may see, newest first, holding every word of ``q``.

        ``cursor`` is a previous page's ``next``; a cursor this engine never gave is a
        :class:`BadCursor`, and a limit outside 1..100 a ValueError.
        """
        if limit not in PAGE_LIMITS:
            raise ValueError("limit must be an integer from 1 to 100")
        before = cursor_position(cursor)
        wanted = words_of(q)
        with self.lock:
            state = self._soul(soul)
            found = [
                m
                for m in reversed(state.visible(viewer))
                if m.seq < before and wanted <= words_of(m.text)
            ]
            page = found[:limit]
            more = len(found) > limit
            return {
                "items": [m.item() for m in page],
                "next": f"before-{page[-1].seq}" if more else None,
                "revision": state.head,
            }

    def members(self, soul: str) -> dict[str, Any]:
        """Every member who said something the soul keeps, with a count of their private items."""
        with self.lock:
            state = self._soul(soul)
            counts: dict[str, dict[str, Any]] = {}
            for memory in state.memories:
                if memory.said_by is None:
                    continue
                entry = counts.setdefault(
                    memory.said_by["member"],
                    {"member": memory.said_by["member"], "name": "", "private_items": 0},
                )
                entry["name"] = memory.said_by["name"]  # the latest name the member went by
                entry["private_items"] += int(memory.scope == "private")
            members = sorted(counts.values(), key=lambda m: (m["name"], m["member"]))
            return {"members": members, "revision": state.head}

    def forget(self, soul: str, item_id: str, *, viewer: str | None) -> dict[str, Any]:
        """Forget one item ``viewer`` may see (else :class:`~.souls.UnknownItem`)."""
        with self.lock:
            state = self._soul(soul)
            state.forget([state.find(item_id, viewer=viewer)])
            return {"forgotten": item_id, "revision": state.head}

    def rescope(self, soul: str, item_id: str, *, viewer: str | None, scope: str) -> dict[str, Any]:
        """Change the scope of one item ``viewer`` may see; private means private to its sayer."""
        with self.lock:
            state = self._soul(soul)
            memory = state.find(item_id, viewer=viewer)
            state.rescope(memory, scope)
            return {"item": memory.item(), "revision": state.head}

    def forget_member(self, soul: str, member: str) -> dict[str, Any]:
        """Forget every item ``member`` said, private and household."""
        with self.lock:
            state = self._soul(soul)
            doomed = [m for m in state.memories if m.owner == member]
            state.forget(doomed)
            return {"forgotten": len(doomed), "revision": state.head}

    # -- events -------------------------------------------------------------------------------
    def record_event(self, event: dict[str, Any]) -> bool:
        """Record a turn event once; False when its id was seen before (nothing happens again).

        A malformed event is a ValueError or KeyError, and nothing of it is kept.
        """
        with self.lock:
            if event["id"] in self.events:
                return False
            remembered = remembered_by_event(event)
            self.events[event["id"]] = event
            state = self._soul(event["soul"])
            for new in remembered:
                state.add(text=new.text, scope=new.scope, said_by=new.said_by, source=new.source)
            return True

    # -- asks ---------------------------------------------------------------------------------
    def ask(self, soul: str, conversation: str, question: str, *, viewer: str | None = None) -> str:
        """Take a question; it is answered later from what ``viewer`` may see."""
        ask_id = f"ask_{uuid.uuid4().hex[:16]}"
        with self.lock:
            self.asks[ask_id] = Ask(
                ask_id=ask_id,
                soul=soul,
                conversation=conversation,
                question=question,
                viewer=viewer,
                ready_at=self.clock() + self.answer_delay,
            )
        return ask_id

    def answers(self, conversation: str) -> list[dict[str, Any]]:
        """The conversation's unacknowledged answers that are ready; each is written once."""
        ready = []
        with self.lock:
            asks = [a for a in self.asks.values() if a.conversation == conversation and not a.acked]
            for ask in asks:
                if self.clock() < ask.ready_at:
                    continue
                if not ask.answer_id:
                    ask.answer = answer_from(
                        self.recall(ask.soul, ask.question, 3, viewer=ask.viewer)
                    )
                    ask.answer_id = f"ans_{uuid.uuid4().hex[:16]}"
                    ask.answered_at = now_iso()
                ready.append(
                    {
                        "id": ask.answer_id,
                        "ask_id": ask.ask_id,
                        "question": ask.question,
                        "answer": ask.answer,
                        "answered_at": ask.answered_at,
                    }
                )
        return ready

    def ack(self, conversation: str, ids: list[str]) -> None:
        with self.lock:
            for ask in self.asks.values():
                if ask.conversation == conversation and ask.answer_id in ids:
                    ask.acked = True

    # -- unattended runs: household items only ------------------------------------------------
    def brief(self, soul: str) -> dict[str, Any]:
        head = self.block(soul)
        return {
            "brief": f"Recent memories for this wake.\n{head['block']}",
            "revision": head["revision"],
        }

    def bundle(self, soul: str, job: dict[str, Any], revision: str | None) -> dict[str, Any]:
        """The job's bundle at ``revision`` (the head when None), from household items only.

        Raises :class:`~.souls.UnknownRevision` or :class:`~.souls.RevisionGone`.
        """
        found = self.block(soul, revision)
        bundle = f"Job {job.get('name', '')} ({job.get('id', '')}) at {found['revision']}.\n"
        bundle += found["block"]
        digest = hashlib.sha256(bundle.encode("utf-8")).hexdigest()
        return {"bundle": bundle, "revision": found["revision"], "sha256": digest}


def answer_from(found: dict[str, Any]) -> str:
    """An ask's answer in words, from a recall of its question: the matching memories, else
    the most recent ones saying that nothing matched, else that nothing is remembered yet."""
    texts = "; ".join(item["text"] for item in found["items"])
    if not texts:
        return "nothing is remembered about that yet."
    if found["match"] == "exact":
        return texts
    return f"nothing matched; the most recent memories are: {texts}"


def cursor_position(cursor: str) -> float:
    """The sequence number a listing cursor points before (no cursor: past the newest item)."""
    if not cursor:
        return float("inf")
    prefix, _, number = cursor.partition("-")
    if prefix != "before" or not number.isdigit():
        raise BadCursor(f"cursor {cursor!r} is not one this engine gave")
    return int(number)
