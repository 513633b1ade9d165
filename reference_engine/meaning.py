"""Meaning, found on this machine: nearest memories by their vectors (:mod:`.embedding`).

:class:`MeaningIndex` keeps one matrix per
soul in this process (read from ``engine_vectors`` at first use, then only the rows written
since), scores every row against the query in one product, and applies visibility from the
database to the best candidates BEFORE the limit, widening the candidates when too few of them
may be seen: a private memory of another member is never an answer.
"""

import threading
from dataclasses import dataclass, field

import numpy as np

from reference_engine.embedding import DIMENSIONS, SCALE, quantised
from reference_engine.souls import Memory
from reference_engine.storage import vectors as vector_rows
from reference_engine.storage.database import Cursor

#: The least cosine similarity a memory needs to be called close in meaning to a query, tuned on
#: ``bench/data/recall_quality.json`` (see docs/reference-engine.md): below it, an unrelated
#: memory would be passed off as a match.
THRESHOLD = 0.30
FIRST_CANDIDATES = 64


@dataclass
class SoulMatrix:
    """One soul's vectors in this process: item seqs and their int8 rows, grown as rows come."""

    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, DIMENSIONS), dtype=np.int8))
    known: set[int] = field(default_factory=set)
    last_vseq: int = 0

    def add(self, found: list[tuple[int, int, bytes]]) -> None:
        fresh = [(vseq, seq, vec) for vseq, seq, vec in found if seq not in self.known]
        if found:
            self.last_vseq = max(self.last_vseq, max(vseq for vseq, _, _ in found))
        if not fresh:
            return
        seqs = np.fromiter((seq for _, seq, _ in fresh), dtype=np.int64, count=len(fresh))
        rows = np.frombuffer(b"".join(bytes(vec) for _, _, vec in fresh), dtype=np.int8)
        self.seqs = np.concatenate([self.seqs, seqs])
        self.rows = np.concatenate([self.rows, rows.reshape(len(fresh), DIMENSIONS)])
        self.known.update(int(seq) for seq in seqs)


class MeaningIndex:
    """Nearest memories by meaning, per soul, for one engine process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.souls: dict[str, SoulMatrix] = {}

    def matrix(self, cursor: Cursor, soul: str) -> SoulMatrix:
        """The soul's matrix with every vector committed so far (the first call reads them all;
        later ones read the rows written since, and a few before, which another connection may
        have committed out of order on PostgreSQL)."""
        with self.lock:
            held = self.souls.setdefault(soul, SoulMatrix())
            since = held.last_vseq - vector_rows.RECHECK if held.last_vseq else 0
            held.add(vector_rows.vectors_since(cursor, soul, since))
            return held

    def nearest(
        self, cursor: Cursor, soul: str, query: str, *, viewer: str | None, limit: int
    ) -> list[tuple[Memory, float]]:
        """Up to ``limit`` live memories ``viewer`` may see, closest in meaning to ``query`` first
        (ties: most recent first), each at least :data:`THRESHOLD` close, with its similarity."""
        held = self.matrix(cursor, soul)
        if not len(held.seqs) or not query.strip():
            return []
        target = quantised([query])[0].astype(np.int32)
        scores = held.rows.astype(np.int32) @ target
        floor = int(THRESHOLD * SCALE * SCALE)
        above = np.flatnonzero(scores >= floor)
        if not len(above):
            return []
        # best first, ties to the most recent (the larger seq)
        order = above[np.lexsort((-held.seqs[above], -scores[above]))]
        found: list[tuple[Memory, float]] = []
        start, size = 0, max(FIRST_CANDIDATES, limit * 4)
        while start < len(order) and len(found) < limit:
            chunk = order[start : start + size]
            seqs = [int(s) for s in held.seqs[chunk]]
            visible = vector_rows.visible_memories(cursor, soul, seqs, viewer=viewer)
            for index in chunk:
                memory = visible.get(int(held.seqs[index]))
                if memory is not None:
                    found.append((memory, float(scores[index]) / (SCALE * SCALE)))
            start, size = start + len(chunk), size * 4
        return found[:limit]

    def forget(self, soul: str) -> None:
        """Drop this process's copy of ``soul``'s vectors (read again at the next search)."""
        with self.lock:
            self.souls.pop(soul, None)
