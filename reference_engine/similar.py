"""The older memories a new one may replace: the few most similar, by meaning and by words, among
those the new memory's owner may see in the same scope.

A candidate is current (never forgotten, never replaced), older than the new memory, in the new
memory's scope, and visible to its owner (an unattended run's: household only), so a member's
private memory is never a candidate for another member's remember, and never sent to the door
for them. Meaning comes from :class:`~.meaning.MeaningIndex` (visibility applied before its
limit), words from the full-text ranking (:mod:`.storage.ranking`); a candidate is *close* when
its meaning is at least :data:`CLOSE_MEANING` alike and it shares at least :data:`CLOSE_WORDS`
of its words (stop words aside), or its meaning alone is at least :data:`SAME_MEANING` alike: the
model puts sentences of the same shape close whatever they say, so meaning alone would ask the
door about most remembers. Of the close ones, the closest by meaning, shared words and the same
opening words together is put before the door.
"""

from dataclasses import dataclass

import numpy as np

from reference_engine.embedding import SCALE, quantised
from reference_engine.meaning import MeaningIndex
from reference_engine.souls import WORD, Memory, words_of
from reference_engine.storage.database import Cursor
from reference_engine.storage.ranking import ENGLISH_STOP_WORDS, ranked_matches
from reference_engine.storage.truth import Fresh

FEW = 5
"""Most similar memories looked at, from each of meaning and words."""
CLOSE_MEANING = 0.45
"""Cosine similarity at which two memories are close enough to ask whether one replaces the other
(an update of a fact scores about 0.5 and up with the engine's model; unrelated ones below 0.3)."""
CLOSE_WORDS = 0.5
"""Share of the shorter memory's words (stop words aside) the two must share as well."""
SAME_MEANING = 0.8
"""Cosine similarity at which two memories are close whatever words they share."""


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


def same_opening(a: str, b: str) -> float:
    """The share of the shorter text's words that open both texts alike (case aside)."""
    first, second = WORD.findall(a.lower()), WORD.findall(b.lower())
    if not first or not second:
        return 0.0
    same = 0
    for one, other in zip(first, second, strict=False):
        if one != other:
            break
        same += 1
    return same / min(len(first), len(second))


def is_close(similar: Similar) -> bool:
    both = similar.meaning >= CLOSE_MEANING and similar.words >= CLOSE_WORDS
    return both or similar.meaning >= SAME_MEANING


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
    lacking = [m for m in worded if fits(m, new) and m.seq not in found]
    if lacking:  # found by words but not among the nearest: their meaning, scored here
        rows = quantised([new.text, *(m.text for m in lacking)]).astype(np.int32)
        scores = rows[1:] @ rows[0] / (SCALE * SCALE)
        for memory, score in zip(lacking, scores, strict=True):
            found[memory.seq] = Similar(memory, float(score), shared_words(memory.text, new.text))
    close = [s for s in found.values() if is_close(s)]
    if not close:
        return None
    # Meaning, shared words and the same opening together: an update keeps what a fact is about
    # (its first words) and changes its value, so "Cleo's dentist is Dr Lund" is closer to
    # "Cleo's dentist is now Dr Haas" than "Ben's dentist is Dr Haas" is, though the model and
    # the shared words score the two alike.
    return max(
        close,
        key=lambda s: (s.meaning + s.words + same_opening(s.memory.text, new.text), s.memory.seq),
    )
