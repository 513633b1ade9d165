"""What a bounded block holds: the fair rule, and how a chosen selection reads as text.

Pure functions of the candidates given (no database): :mod:`.storage.blocks` finds the candidates
of one (revision, viewer) and stores what :func:`choose` picked, so the block renders the same
bytes for ever. The rule, in order (``docs/reference-engine.md``, *What a block holds*):

1. the newest memory the viewer may see (so a block made after it always holds it);
2. memories a member marked *keep in every chat*, newest first, leaving each share below the room
   it is promised;
3. the viewer's own private memories, up to a third of the budget (less when they need less):
   those curation chose first, then the newest;
4. the household's memories, in the same order, in all the room left (which keeps at least a
   third for them);
5. more of the viewer's private memories, if room is still left.

A line that does not fit is skipped, never cut; the same words (case, spacing and end punctuation
aside) stand once. The block ends with one line saying how many visible memories it leaves out
and that ``recall`` finds them.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from reference_engine.souls import HEADER, NOTHING_YET

MOST_LEFT_OUT = 10**12
"""The footer's room is kept for a count this large, so any count fits."""
SPACING = re.compile(r"\s+")
END_PUNCTUATION = " .!?;:,…"


@dataclass(frozen=True)
class Candidate:
    """A memory a block may hold: its sequence number, words, and whether it is private."""

    seq: int
    text: str
    private: bool

    @cached_property
    def line(self) -> str:
        return f"- (private) {self.text}" if self.private else f"- {self.text}"


def same_words(text: str) -> str:
    """``text`` with case, spacing and end punctuation set aside: two memories with the same
    words give the same key."""
    return SPACING.sub(" ", text.strip().lower()).rstrip(END_PUNCTUATION)


def footer(left_out: int) -> str:
    """The last line of a block that leaves memories out (none when it leaves none out)."""
    if left_out == 1:
        return "1 more memory is not shown here: the memory tool's recall finds it."
    return f"{left_out} more memories are not shown here: the memory tool's recall finds them."


def room_for_lines(budget: int) -> int:
    """Characters the memory lines may take (each with its newline) in a block of ``budget``."""
    return budget - len(HEADER) - len(footer(MOST_LEFT_OUT)) - 1


class Chooser:
    """One selection being made: what is taken so far, and the characters it uses."""

    def __init__(self) -> None:
        self.taken: list[Candidate] = []
        self.seqs: set[int] = set()
        self.words: set[str] = set()
        self.used = 0

    def take(self, candidate: Candidate, limit: int) -> None:
        """Take ``candidate`` if it is new, its words are new, and it fits under ``limit``."""
        cost = len(candidate.line) + 1
        if candidate.seq in self.seqs or self.used + cost > limit:
            return
        key = same_words(candidate.text)
        if key in self.words:
            return
        self.taken.append(candidate)
        self.seqs.add(candidate.seq)
        self.words.add(key)
        self.used += cost

    def take_all(self, candidates: Iterable[Candidate], limit: int) -> None:
        for candidate in candidates:
            self.take(candidate, limit)


def wanted(candidates: list[Candidate]) -> int:
    return sum(len(c.line) + 1 for c in candidates)


def choose(
    *,
    newest: Candidate | None,
    kept: list[Candidate],
    private: list[Candidate],
    household: list[Candidate],
    budget: int,
) -> list[Candidate]:
    """The memories a block of ``budget`` characters holds, by the fair rule (module docstring),
    in the order they are rendered (oldest first)."""
    room = room_for_lines(budget)
    third = room // 3
    keep_private, keep_household = min(third, wanted(private)), min(third, wanted(household))
    chooser = Chooser()
    if newest is not None:
        chooser.take(newest, room)
    chooser.take_all(kept, room - keep_private - keep_household)
    chooser.take_all(private, chooser.used + keep_private)
    chooser.take_all(household, room)
    chooser.take_all(private, room)
    return sorted(chooser.taken, key=lambda c: c.seq)


def render(held: list[Candidate], left_out: int) -> str:
    """The block's text: the held memories oldest first, then the line on what it left out."""
    if not held and not left_out:
        return NOTHING_YET
    lines = [HEADER, *(c.line for c in held)]
    if left_out:
        lines.append(footer(left_out))
    return "\n".join(lines)
