"""The engine's judgement, borrowed through the brain door: answers to asks, wake briefs, and the
curation of blocks (:mod:`.curation`, run by the same background worker).

An ask is answered from the memories its viewer may see when the answer is made (a ranked recall
of its question, read at that moment, never at the ask), which the door's ``assemble`` role turns
into the answer; the door is told the viewer, so it can leave out what its site knows that viewer
may no longer see. The answer is written once into the ask's row (:mod:`.storage.asks`) with the
ids of every memory offered, so the next turn's answers fetch finds it and the plug-in can check
it like a block; it is written only if each of those memories is still visible to the viewer
(checked in the writing transaction), else the ask is answered afresh. With a door configured this
runs off the request path: a :class:`Thinker` thread in the engine process picks the asks that are
due from the database, so an ask left pending by a killed engine is answered after a restart.
Without one there is nothing slow to wait for, and the answers fetch writes the answer itself.

A wake's brief is curated the same way from the most recent household items (never a private
one). When the door fails, refuses or is not configured, an answer says plainly that Pippa could
not work it out (quoting only memories that matched, never a made-up answer), and a brief is the
recent household memories, marked as a fallback.
"""

import hashlib
import json
import logging
import threading
import time
import uuid
from typing import Any

from reference_engine.brain_client import BrainClient, DoorFailed
from reference_engine.curation import Curator
from reference_engine.deciding import Decider
from reference_engine.selection import Candidate, choose, render
from reference_engine.souls import now_iso
from reference_engine.storage import asks as ask_rows
from reference_engine.storage.memories import all_visible
from reference_engine.storage.ranking import most_recent
from reference_engine.storage.revisions import head_number, revision_name

logger = logging.getLogger(__name__)

ASK_FACTS = 20
"""Memories an ask's recall offers the door."""
ANSWER_BUDGET = 1200
BRIEF_FACTS = 50
"""Most recent household memories a brief is curated from."""
BRIEF_BUDGET = 4000
QUOTED = 3
"""Matching memories an answer that could not be worked out quotes, at most."""
RETRY_WINDOW = 120.0
"""Seconds an ask keeps being tried while the door says "not now" (busy, throttled, running)."""
RETRY_PAUSE = 2.0
POLL_SECONDS = 0.5
WRITE_TRIES = 3
"""Times an answer made on a request's thread is made afresh when a memory it used went away."""
NOTHING_REMEMBERED = "nothing is remembered about that yet."
ASK_PURPOSE = (
    "Answer this question from a member of the household, using only these memories: {question!r}. "
    "Answer in a sentence or two. If the memories do not answer it, say that you do not know; "
    "never guess."
)
BRIEF_PURPOSE = (
    "Write a short brief for Pippa's unattended wake from these household memories: what matters "
    "now, most useful first. Use only the memories given."
)


def could_not(reason: str, found: dict[str, Any]) -> str:
    """An answer that says plainly Pippa could not work the question out, and why; it quotes the
    memories that matched the question, if any, and never anything else."""
    said = f"Pippa could not work that out: {reason}."
    if found["match"] == "fallback":
        return f"{said} Nothing she remembers matched the question."
    texts = "; ".join(item["text"] for item in found["items"][:QUOTED])
    return f"{said} The memories that match the question: {texts}"


class Thinker:
    """Answers asks and curates briefs for ``state`` (an :class:`~.state.EngineState`) through
    ``brain``; :meth:`start` runs the background worker (needed only when ``background``)."""

    def __init__(self, state: Any, brain: BrainClient) -> None:
        self.state, self.brain = state, brain
        self.nudge, self.stopping = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None
        self.first_try: dict[str, float] = {}
        self.next_try: dict[str, float] = {}
        self.curator = Curator(state, brain)
        self.decider = Decider(state, brain)

    @property
    def background(self) -> bool:
        """True when answers need the door, so the worker writes them, never a request."""
        return self.brain.configured

    # -- asks -----------------------------------------------------------------------------------
    def answer(self, ask: dict[str, Any]) -> tuple[str, list[str]] | None:
        """The answer to ``ask`` in words with the ids of the memories it was made from, or None
        to try again later (the door said "not now"). Visibility is read now, for the ask's
        viewer: a memory forgotten or made private since the ask was taken is not offered."""
        found = self.state.recall(ask["soul"], ask["question"], ASK_FACTS, viewer=ask["viewer"])
        if not found["items"]:
            return NOTHING_REMEMBERED, []
        ids = [item["id"] for item in found["items"]]
        facts = [{"id": item["id"], "text": item["text"]} for item in found["items"]]
        purpose = ASK_PURPOSE.format(question=ask["question"][:1500])
        data = {"purpose": purpose, "facts": facts, "budget_chars": ANSWER_BUDGET}
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        try:
            # The same ask with the same memories is the same call: a replay after a restart
            # gets the door's stored answer instead of running a vessel again.
            judgement = self.brain.assemble(
                ask["soul"], data, webhook_id=f"engine_{ask['id']}_{digest}", viewer=ask["viewer"]
            )
        except DoorFailed as failed:
            if failed.transient and self.may_retry(ask["id"]):
                return None
            return could_not(failed.reason, found), ids
        block = judgement.output["block"].strip()
        return (block or could_not("the vessel put nothing together from the memories", found)), ids

    def may_retry(self, ask_id: str) -> bool:
        now = time.monotonic()
        first = self.first_try.setdefault(ask_id, now)
        self.next_try[ask_id] = now + RETRY_PAUSE
        return now - first < RETRY_WINDOW

    def write(self, ask: dict[str, Any], answer: str, items: list[str]) -> bool:
        """Write ``answer`` into the ask's row, unless one of ``items`` is no longer visible to
        the ask's viewer (forgotten or made private while the answer was made): False then, and
        the ask stays open to be answered afresh."""
        with self.state.database.write() as cursor:
            if not all_visible(cursor, ask["soul"], items, viewer=ask["viewer"]):
                return False
            ask_rows.write_answer(
                cursor, ask["id"], f"ans_{uuid.uuid4().hex[:16]}", answer, now_iso(), items
            )
        self.first_try.pop(ask["id"], None)
        self.next_try.pop(ask["id"], None)
        return True

    def answer_now(self, ask: dict[str, Any]) -> None:
        """Answer ``ask`` on the caller's thread (no door: nothing slow), afresh while what it was
        made from changes under it, a few times at most."""
        for _ in range(WRITE_TRIES):
            answered = self.answer(ask)
            text, items = answered if answered is not None else ("", [])
            if self.write(ask, text, items):
                return

    def answer_due(self) -> int:
        """Answer every ask that is due and not held back; returns how many were written."""
        with self.state.database.read() as cursor:
            due = ask_rows.due_asks(cursor, self.state.clock(), limit=20)
        written = 0
        for ask in due:
            if self.stopping.is_set():
                break
            if self.next_try.get(ask["id"], 0.0) > time.monotonic():
                continue
            answered = self.answer(ask)
            if answered is not None and self.write(ask, *answered):
                written += 1
        return written

    # -- the worker -----------------------------------------------------------------------------
    def start(self) -> "Thinker":
        if self.background and self.thread is None:
            self.thread = threading.Thread(target=self.run, name="engine-thinker", daemon=True)
            self.thread.start()
        return self

    def wake(self) -> None:
        """An ask was taken: look now rather than at the next poll."""
        self.nudge.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.answer_due()
            except Exception:  # a database hiccup must not end the worker: log, try again
                logger.exception("The engine could not answer its due asks; trying again")
            try:
                self.decider.decide_due()
            except Exception:  # no judgement, no change: the next round tries again
                logger.exception("The engine could not judge its new memories; trying again")
            try:
                self.curator.curate_due()
            except Exception:  # the last choice keeps serving; the next round tries again
                logger.exception("The engine could not curate its blocks; trying again")
            self.nudge.wait(POLL_SECONDS)
            self.nudge.clear()

    def ask_to_stop(self) -> None:
        """Stop at the next ask, at once: the one whose brain call is under way is finished and
        written first, and those still due are left for the next start."""
        self.stopping.set()
        self.nudge.set()

    def stop(self, *, timeout: float = 10.0) -> bool:
        """:meth:`ask_to_stop`, then wait for it: True once the worker has ended (or never ran),
        False if ``timeout`` came first."""
        self.ask_to_stop()
        if self.thread is None:
            return True
        self.thread.join(timeout=timeout)
        return not self.thread.is_alive()

    # -- briefs ---------------------------------------------------------------------------------
    def brief(self, soul: str) -> dict[str, Any]:
        """A wake's brief from the most recent household items: curated by the door, else those
        items as they are, marked as a fallback (``fallback`` says why)."""
        with self.state.database.read() as cursor:
            recent = most_recent(cursor, soul, viewer=None, limit=BRIEF_FACTS)
            revision = revision_name(head_number(cursor, soul))
        ids = [memory.id for memory in reversed(recent)]  # oldest first, as a block reads
        reason = self.brain.problem or "the household keeps no memories yet"
        budget = min(BRIEF_BUDGET, self.state.block_chars)
        if recent and self.brain.configured:
            facts = [{"id": memory.id, "text": memory.text} for memory in reversed(recent)]
            data = {"purpose": BRIEF_PURPOSE, "facts": facts, "budget_chars": budget}
            try:
                block = self.brain.assemble(soul, data).output["block"].strip()
                reason = "the vessel put nothing together from them"
            except DoorFailed as failed:
                block, reason = "", failed.reason
            if block:
                return brief_body(block, revision, ids, fallback=None)
        heading = (
            f"Recent household memories for this wake (a fallback: they were not curated, "
            f"because {reason}).\n"
        )
        # The newest that fit the budget, whole lines only, each set of words once.
        candidates = [Candidate(seq=m.seq, text=m.text, private=False) for m in recent]
        held = choose(
            newest=None,
            kept=[],
            private=[],
            household=candidates,
            budget=self.state.block_chars - len(heading),
        )
        by_seq = {memory.seq: memory.id for memory in recent}
        text = heading + render(held, 0)
        return brief_body(
            text, revision, [by_seq[c.seq] for c in held], fallback={"reason": reason}
        )


def brief_body(
    text: str, revision: str, ids: list[str], *, fallback: dict[str, str] | None
) -> dict[str, Any]:
    """A brief in the contract's shape; ``items`` are every item offered, so a brief holding one
    since forgotten can be told, whichever of them the vessel used."""
    return {"brief": text, "revision": revision, "items": ids, "viewer": None, "fallback": fallback}
