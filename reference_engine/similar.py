"""The older memories a new one may replace: the few most similar, by meaning and by words, among
those the new memory's owner may see in the same scope.

A candidate is current (never forgotten, never replaced), older than the new memory, in the new
memory's scope, and visible to its owner (an unattended run's: household only), so a member's
private memory is never a candidate for another member's remember, and never sent to the door
for them. Meaning comes from :class:`~.meaning.MeaningIndex` (visibility applied before its
limit), words from the full-text ranking (:mod:`.storage.ranking`); a candidate is *close* when
its meaning is at least :data:`CLOSE_MEANING` alike or it shares most of its words.
"""

from dataclasses import dataclass

from reference_engine.meaning import MeaningIndex
from reference_engine.souls import Memory, words_of
from reference_engine.storage.database import Cursor
from reference_engine.storage.ranking import ENGLISH_STOP_WORDS, ranked_matches
from reference_engine.storage.truth import Fresh

FEW = 5
"""Most similar memories looked at, from each of meaning and words."""
CLOSE_MEANING = 0.45
"""Cosine similarity at which two memories are close enough to ask whether one replaces the other
(an update of a fact scores about 0.5 and up with the engine's model; unrelated ones below 0.3)."""
CLOSE_WORDS = 0.6
"""Share of the shorter memory's words (stop words aside) the two must share to be close."""


@dataclass(frozen=True)
class Similar:
    """An older memory close to a new one, and how close (meaning, words)."""

    memory: Memory
    meaning: float
    words: float


def shared_words(a: str, b: str) -> float:
    """The share of the shorter text's words (stop words aside) that the other holds too."""
    first, second = words_of(a) - ENGLISH_STOP_WORDS, words_of(b) - ENGLISH_STOP_WORDS
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


def fits(candidate: Memory, new: Fresh) -> bool:
    """Older, in the same scope, and (private) the same owner's."""
    same_owner = candidate.owner == new.owner
    return (
        candidate.seq < new.seq
        and candidate.scope == new.scope
        and (new.scope == "household" or same_owner)
    )


def closest(
    cursor: Cursor, meaning: MeaningIndex, soul: str, new: Fresh, *, language: str = "english"
) -> Similar | None:
    """The closest older memory ``new`` may replace (see the module docstring), or None when
    none is close."""
    viewer = new.owner
    found: dict[int, Similar] = {}
    for memory, score in meaning.nearest(cursor, soul, new.text, viewer=viewer, limit=FEW + 1):
        if fits(memory, new):
            found[memory.seq] = Similar(memory, score, shared_words(memory.text, new.text))
    worded = ranked_matches(cursor, soul, new.text, viewer=viewer, limit=FEW + 1, language=language)
    for memory in worded:
        if fits(memory, new) and memory.seq not in found:
            found[memory.seq] = Similar(memory, 0.0, shared_words(memory.text, new.text))
    close = [s for s in found.values() if s.meaning >= CLOSE_MEANING or s.words >= CLOSE_WORDS]
    if not close:
        return None
    return max(close, key=lambda s: (max(s.meaning, s.words), s.memory.seq))
