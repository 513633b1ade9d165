"""Recall: one ranking from words and meaning, saying how each item matched.

Words (:mod:`.storage.ranking`) and meaning (:mod:`.meaning`) each rank the memories the viewer
may see; the two rankings are fused by weighted reciprocal rank fusion (each list adds
``weight / (K + rank)`` for an item; meaning weighs :data:`MEANING_WEIGHT`, words
:data:`WORDS_WEIGHT`), ties going to the most recent, except that a memory holding every word of
the query that counts is an exact match and comes first, as words ranked it. The weights, ``K``
and the meaning threshold were chosen on ``bench/data/recall_quality.json``
(``bench/recall_quality.py`` prints words, meaning and fused side by side). An item is ``matched_by: "words"`` when a query word
(stemmed, not a stop word) is in it, else ``"meaning"`` (no word shared, close in meaning). The
whole recall's ``match`` is ``"words"`` when any item matched by words, ``"meaning"`` when all matched by
meaning, and ``"fallback"`` (the most recent memories) when neither found anything. With meaning
off (``--recall words``, or a contract version 2 caller) it answers as word-only recall did.
"""

from typing import Any

from reference_engine.meaning import MeaningIndex
from reference_engine.souls import Memory, words_of
from reference_engine.storage.database import Database
from reference_engine.storage.ranking import (
    holding_words,
    most_recent,
    query_words,
    ranked_matches,
)

RRF_K = 5
"""Small: the first few places of each ranking count for much more than the rest."""
MEANING_WEIGHT = 1.0
WORDS_WEIGHT = 0.5
"""Words weigh less: a question shares words like *Anna* or *Friday* with many memories it is
not about, while the nearest in meaning is more often the one meant."""
RECALL_MODES = ("meaning", "words")


def exact(memory: Memory, counted: set[str]) -> bool:
    """Whether ``memory`` holds every word of the query that counts (as written)."""
    return bool(counted) and counted <= words_of(memory.text)


def fused(words: list[Memory], near: list[Memory], limit: int, query: str = "") -> list[Memory]:
    """The two rankings as one (module docstring): exact word matches first, then by weighted
    reciprocal rank fusion; ties to the most recent (larger seq)."""
    counted = set(query_words(query))
    first = [memory for memory in words if exact(memory, counted)]
    scores: dict[int, float] = {}
    memories: dict[int, Memory] = {}
    for ranking, weight in ((words, WORDS_WEIGHT), (near, MEANING_WEIGHT)):
        for rank, memory in enumerate(ranking, start=1):
            scores[memory.seq] = scores.get(memory.seq, 0.0) + weight / (RRF_K + rank)
            memories[memory.seq] = memory
    taken = {memory.seq for memory in first}
    rest = sorted((seq for seq in scores if seq not in taken), key=lambda s: (-scores[s], -s))
    return [*first, *(memories[seq] for seq in rest)][:limit]


def recall_body(
    database: Database,
    index: MeaningIndex,
    soul: str,
    query: str,
    limit: int,
    *,
    viewer: str | None,
    meaning: bool,
    language: str,
) -> dict[str, Any]:
    """The recall body (contract version 3's shape) for ``viewer``."""
    depth = max(limit * 4, 20) if meaning else limit
    with database.read() as cursor:
        by_words = ranked_matches(
            cursor, soul, query, viewer=viewer, limit=depth, language=language
        )
        near = []
        if meaning and query_words(query):  # stop words alone mean nothing either
            near = [m for m, _ in index.nearest(cursor, soul, query, viewer=viewer, limit=depth)]
        hits = fused(by_words, near, limit, query) if meaning else by_words
        worded = {m.seq for m in by_words}
        others = [m.seq for m in hits if m.seq not in worded]
        worded |= holding_words(cursor, others, query, language=language)
        recent = [] if hits else most_recent(cursor, soul, viewer=viewer, limit=limit)
    if hits:
        items = [
            {**m.item(), "matched_by": "words" if m.seq in worded else "meaning"} for m in hits
        ]
        match = "words" if any(i["matched_by"] == "words" for i in items) else "meaning"
        return {"match": match, "items": items, "fallback": None}
    recent.reverse()  # oldest first, as a block reads
    return {
        "match": "fallback",
        "items": [m.item() for m in recent],
        "fallback": {
            "from": f"memories matching {query!r}",
            "to": f"the {len(recent)} most recent memories",
            "reason": "no memory matched the query",
        },
    }


def for_version_2(body: dict[str, Any]) -> dict[str, Any]:
    """A words-only body as contract version 2 has it: ``exact`` for a word match, and no
    ``matched_by``."""
    match = "exact" if body["match"] == "words" else body["match"]
    items = [{k: v for k, v in i.items() if k != "matched_by"} for i in body["items"]]
    return {**body, "match": match, "items": items}
