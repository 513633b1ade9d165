"""The reference engine's memory: what souls left behind, revisions, asks and answers.

Memories come from the ``remember`` tool uses of the turn events it receives; every change moves
the soul's head revision. Recall matches words of the query and, when nothing matches, falls back
to the most recent memories and says so. Asks are answered after a short delay. Bundles and blocks
for a revision are deterministic.
"""

import hashlib
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = {
    "the",
    "a",
    "an",
    "is",
    "are",
    "of",
    "to",
    "and",
    "or",
    "i",
    "my",
    "what",
    "who",
    "me",
}


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Memory:
    id: str
    text: str
    at: str


@dataclass
class Ask:
    ask_id: str
    soul: str
    conversation: str
    question: str
    ready_at: float
    answer_id: str = ""
    answer: str = ""
    answered_at: str = ""
    acked: bool = False


@dataclass
class SoulMemory:
    memories: list[Memory] = field(default_factory=list)
    # revision -> the memory ids it holds, so any revision's block can be rendered again.
    revisions: dict[str, list[str]] = field(default_factory=dict)
    head: str = "r0"


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

    # -- memories and revisions ----------------------------------------------------------------
    def _soul(self, soul: str) -> SoulMemory:
        if soul not in self.souls:
            self.souls[soul] = SoulMemory(revisions={"r0": []})
        return self.souls[soul]

    def remember(self, soul: str, text: str) -> str:
        """Add a memory; the soul's head moves to a new revision, which is returned."""
        with self.lock:
            state = self._soul(soul)
            state.memories.append(Memory(id=f"m{uuid.uuid4().hex[:12]}", text=text, at=now_iso()))
            state.head = f"r{len(state.revisions)}"
            state.revisions[state.head] = [m.id for m in state.memories]
            return state.head

    def block(self, soul: str, revision: str | None = None) -> tuple[str, str] | None:
        """``(revision, block text)`` at ``revision`` (the head when None); None if unknown."""
        with self.lock:
            state = self._soul(soul)
            revision = revision or state.head
            if revision not in state.revisions:
                return None
            ids = set(state.revisions[revision])
            texts = [m.text for m in state.memories if m.id in ids]
        if not texts:
            return revision, "Nothing is remembered yet."
        return revision, "What I remember:\n" + "\n".join(f"- {text}" for text in texts)

    def recall(self, soul: str, query: str, limit: int) -> dict[str, Any]:
        words = {w for w in WORD.findall(query.lower()) if w not in STOP_WORDS}
        with self.lock:
            memories = list(self._soul(soul).memories)
        hits = [m for m in memories if words & set(WORD.findall(m.text.lower()))]
        if hits:
            items = hits[-limit:]
            return {"match": "exact", "items": [vars(m) for m in items], "fallback": None}
        recent = memories[-limit:]
        return {
            "match": "fallback",
            "items": [vars(m) for m in recent],
            "fallback": {
                "from": f"memories matching {query!r}",
                "to": f"the {len(recent)} most recent memories",
                "reason": "no memory matched the query",
            },
        }

    # -- events -------------------------------------------------------------------------------
    def record_event(self, event: dict[str, Any]) -> bool:
        """Record a turn event once; False when its id was seen before (nothing happens again)."""
        with self.lock:
            if event["id"] in self.events:
                return False
            self.events[event["id"]] = event
            for use in event["message"].get("tool_uses", []):
                tool_input = use.get("input") or {}
                if use.get("name") == "memory" and tool_input.get("verb") == "remember":
                    text = str(tool_input.get("text", "")).strip()
                    if text:
                        self.remember(event["soul"], text)
            return True

    # -- asks ---------------------------------------------------------------------------------
    def ask(self, soul: str, conversation: str, question: str) -> str:
        ask_id = f"ask_{uuid.uuid4().hex[:16]}"
        with self.lock:
            self.asks[ask_id] = Ask(
                ask_id=ask_id,
                soul=soul,
                conversation=conversation,
                question=question,
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
                    found = self.recall(ask.soul, ask.question, 3)
                    texts = "; ".join(item["text"] for item in found["items"]) or "nothing yet"
                    label = "I found" if found["match"] == "exact" else "Nothing matched; recently"
                    ask.answer = f"{label}: {texts}"
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

    # -- unattended runs ----------------------------------------------------------------------
    def brief(self, soul: str) -> dict[str, Any]:
        revision, text = self.block(soul)  # type: ignore[misc]
        return {"brief": f"Recent memories for this wake.\n{text}", "revision": revision}

    def bundle(self, soul: str, job: dict[str, Any], revision: str | None) -> dict[str, Any] | None:
        found = self.block(soul, revision)
        if found is None:
            return None
        revision, text = found
        bundle = f"Job {job.get('name', '')} ({job.get('id', '')}) at {revision}.\n{text}"
        digest = hashlib.sha256(bundle.encode("utf-8")).hexdigest()
        return {"bundle": bundle, "revision": revision, "sha256": digest}
