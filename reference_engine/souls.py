"""One soul's memory in the reference engine: items with an owner, revisions, and who sees what.

An item is ``household`` (every member sees it) or ``private`` (only the member who said it).
A revision is a snapshot of which items the soul held, with the scope each had then, so the block
of (revision, viewer) renders the same bytes every time, or is gone: once an item the block held
is forgotten, or no longer visible to that viewer, the block is never rendered again.
"""

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SCOPES = ("private", "household")
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
NOTHING_YET = "Nothing is remembered yet."


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def words_of(text: str) -> set[str]:
    """The lower-cased words of ``text``."""
    return set(WORD.findall(text.lower()))


def is_visible(*, scope: str, owner: str | None, viewer: str | None) -> bool:
    """Visibility, the one rule: household items to all, private items to their owner only."""
    return scope == "household" or (viewer is not None and owner == viewer)


class UnknownRevision(LookupError):
    """The soul never had this revision."""


class RevisionGone(LookupError):
    """The block of this revision, for this viewer, held an item it may no longer show."""


class UnknownItem(LookupError):
    """No such item, or not one the viewer may see (the two are not told apart)."""


class NoOwner(ValueError):
    """A private item needs a member to own it; an unattended run's item has none."""


@dataclass
class Memory:
    """One memory item; only ``scope`` ever changes."""

    id: str
    text: str
    at: str
    scope: str
    said_by: dict[str, str] | None
    source: dict[str, str | None]
    seq: int

    @property
    def owner(self) -> str | None:
        return self.said_by["member"] if self.said_by else None

    def visible_to(self, viewer: str | None) -> bool:
        return is_visible(scope=self.scope, owner=self.owner, viewer=viewer)

    def item(self) -> dict[str, Any]:
        """The contract's item shape: id, text, at, scope, said_by and source."""
        return {
            "id": self.id,
            "text": self.text,
            "at": self.at,
            "scope": self.scope,
            "said_by": dict(self.said_by) if self.said_by else None,
            "source": dict(self.source),
        }


@dataclass(frozen=True)
class Held:
    """An item as a revision holds it: its id, and its scope and owner at that revision."""

    id: str
    scope: str
    owner: str | None


def render_block(held: list[tuple[str, str]]) -> str:
    """The block text for ``(text, scope)`` pairs, oldest first; private items say so."""
    if not held:
        return NOTHING_YET
    lines = [f"- (private) {text}" if scope == "private" else f"- {text}" for text, scope in held]
    return "What I remember:\n" + "\n".join(lines)


@dataclass
class SoulMemory:
    """A soul's live items (oldest first) and every revision it has had; not thread-safe alone."""

    memories: list[Memory] = field(default_factory=list)
    revisions: dict[str, list[Held]] = field(default_factory=lambda: {"r0": []})
    head: str = "r0"
    next_seq: int = 1

    def add(
        self, *, text: str, scope: str, said_by: dict[str, str] | None, source: dict[str, Any]
    ) -> Memory:
        """Add an item and move the head; a private item with no member is refused."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {list(SCOPES)}, not {scope!r}")
        if scope == "private" and said_by is None:
            raise NoOwner("A private memory needs the member who said it.")
        memory = Memory(
            id=f"m{uuid.uuid4().hex[:12]}",
            text=text,
            at=now_iso(),
            scope=scope,
            said_by=said_by,
            source={key: source.get(key) for key in ("conversation", "message", "tool_use")},
            seq=self.next_seq,
        )
        self.next_seq += 1
        self.memories.append(memory)
        self.move_head()
        return memory

    def move_head(self) -> str:
        """A new revision holding the live items as they are now; it becomes the head."""
        self.head = f"r{len(self.revisions)}"
        self.revisions[self.head] = [Held(m.id, m.scope, m.owner) for m in self.memories]
        return self.head

    def visible(self, viewer: str | None) -> list[Memory]:
        """The live items ``viewer`` may see, oldest first."""
        return [m for m in self.memories if m.visible_to(viewer)]

    def find(self, item_id: str, *, viewer: str | None) -> Memory:
        for memory in self.memories:
            if memory.id == item_id and memory.visible_to(viewer):
                return memory
        raise UnknownItem(item_id)

    def block(self, revision: str, *, viewer: str | None) -> tuple[list[str], str]:
        """``(item ids, block text)`` of ``revision`` as ``viewer`` sees it.

        Raises :class:`UnknownRevision`, or :class:`RevisionGone` when the block held an item
        since forgotten or no longer visible to ``viewer`` (made private to someone else).
        """
        if revision not in self.revisions:
            raise UnknownRevision(revision)
        held = [
            h
            for h in self.revisions[revision]
            if is_visible(scope=h.scope, owner=h.owner, viewer=viewer)
        ]
        live = {m.id: m for m in self.memories}
        if any(h.id not in live or not live[h.id].visible_to(viewer) for h in held):
            raise RevisionGone(revision)
        return [h.id for h in held], render_block([(live[h.id].text, h.scope) for h in held])

    def forget(self, doomed: list[Memory]) -> None:
        """Drop these items for good; the head moves when there were any."""
        if not doomed:
            return
        ids = {m.id for m in doomed}
        self.memories = [m for m in self.memories if m.id not in ids]
        self.move_head()

    def rescope(self, memory: Memory, scope: str) -> None:
        """Change one item's scope; the head moves when the scope changed."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {list(SCOPES)}, not {scope!r}")
        if scope == memory.scope:
            return
        if scope == "private" and memory.owner is None:
            raise NoOwner("An unattended run's memory has no member to keep it private for.")
        memory.scope = scope
        self.move_head()
