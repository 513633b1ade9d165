"""The reference engine's rules for one soul's memory: items with an owner, and who sees what.

An item is ``household`` (every member sees it) or ``private`` (only the member who said it).
A revision names which items the soul held, with the scope each had then, so the block
of (revision, viewer) renders the same bytes every time, or is gone: once an item the block held
is forgotten, or no longer visible to that viewer, the block is never rendered again.
"""

import re
from dataclasses import dataclass
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
HEADER = "What I remember:"


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
    """One memory item; only ``scope`` and ``keep`` (*keep in every chat*) ever change."""

    id: str
    text: str
    at: str
    scope: str
    said_by: dict[str, str] | None
    source: dict[str, str | None]
    seq: int
    keep: bool = False

    @property
    def owner(self) -> str | None:
        return self.said_by["member"] if self.said_by else None

    def visible_to(self, viewer: str | None) -> bool:
        return is_visible(scope=self.scope, owner=self.owner, viewer=viewer)

    def item(self) -> dict[str, Any]:
        """The contract's item shape: id, text, at, scope, said_by, source and (version 3) keep."""
        return {
            "id": self.id,
            "text": self.text,
            "at": self.at,
            "scope": self.scope,
            "said_by": dict(self.said_by) if self.said_by else None,
            "source": dict(self.source),
            "keep": self.keep,
        }


def render_block(held: list[tuple[str, str]]) -> str:
    """The block text for ``(text, scope)`` pairs, oldest first; private items say so."""
    if not held:
        return NOTHING_YET
    lines = [f"- (private) {text}" if scope == "private" else f"- {text}" for text, scope in held]
    return HEADER + "\n" + "\n".join(lines)
