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
THRESHOLD = 0.20
FIRST_CANDIDATES = 64
EXACT_UP_TO = 5_000
"""A soul with at most this many vectors is scored exactly, every row; past it the sign bits of
each vector (32 bytes) choose :data:`SHORTLIST` rows by Hamming distance first, and only those are
scored exactly (a product over 100,000 int8 rows would take tens of milliseconds)."""
SHORTLIST = 2_000
WORDS_OF_BITS = DIMENSIONS // 64


def sign_bits(rows: np.ndarray) -> np.ndarray:
    """The sign bits of each of ``rows`` (int8 vectors) as :data:`WORDS_OF_BITS` uint64 words."""
    packed = np.packbits(rows > 0, axis=-1)
    return np.ascontiguousarray(packed).view(np.uint64)


@dataclass
class SoulMatrix:
    """One soul's vectors in this process: item seqs and their int8 rows, grown as rows come."""

    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, DIMENSIONS), dtype=np.int8))
    bits: np.ndarray = field(default_factory=lambda: np.zeros((0, WORDS_OF_BITS), dtype=np.uint64))
    """Each vector's sign bits, as four 64-bit words (so a Hamming distance is four popcounts)."""
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
        rows = rows.reshape(len(fresh), DIMENSIONS)
        self.seqs = np.concatenate([self.seqs, seqs])
        self.rows = np.concatenate([self.rows, rows])
        self.bits = np.concatenate([self.bits, sign_bits(rows)])
        self.known.update(int(seq) for seq in seqs)


class MeaningIndex:
    """Nearest memories by meaning, per soul, for one engine process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.souls: dict[str, SoulMatrix] = {}

    def matrix(self, cursor: Cursor, soul: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The soul's ``(seqs, rows, bits)`` with every vector committed so far, as one snapshot
        (a later write replaces the arrays, never changes them). The first call reads them all;
        later ones read the rows written since, and a few before, which another connection may
        have committed out of order on PostgreSQL."""
        with self.lock:
            held = self.souls.setdefault(soul, SoulMatrix())
            since = held.last_vseq - vector_rows.RECHECK if held.last_vseq else 0
            held.add(vector_rows.vectors_since(cursor, soul, since))
            return held.seqs, held.rows, held.bits

    def nearest(
        self, cursor: Cursor, soul: str, query: str, *, viewer: str | None, limit: int
    ) -> list[tuple[Memory, float]]:
        """Up to ``limit`` live memories ``viewer`` may see, closest in meaning to ``query`` first
        (ties: most recent first), each at least :data:`THRESHOLD` close, with its similarity."""
        seqs, rows, bits = self.matrix(cursor, soul)
        if not len(seqs) or not query.strip():
            return []
        target = quantised([query])[0]
        if len(rows) > EXACT_UP_TO:  # the nearest by sign bits, then those scored exactly
            counts = np.bitwise_count(bits ^ sign_bits(target))
            apart = counts[:, 0].astype(np.int32)
            for word in range(1, WORDS_OF_BITS):
                apart += counts[:, word]
            places = np.argpartition(apart, SHORTLIST)[:SHORTLIST]
            chosen = rows[places]
        else:
            places, chosen = np.arange(len(rows)), rows
        # exact integer products, and no BLAS: its worker threads spin beside the database's
        # process on a small machine, which tripled this search's slowest times
        scores = np.einsum("ij,j->i", chosen, target, dtype=np.int32)
        close = scores >= int(THRESHOLD * SCALE * SCALE)
        places, scores = places[close], scores[close]
        if not len(places):
            return []
        # best first, ties to the most recent (the larger seq)
        order = np.lexsort((-seqs[places], -scores))
        places, scores = places[order], scores[order]
        found: list[tuple[Memory, float]] = []
        start, size = 0, max(FIRST_CANDIDATES, limit * 4)
        while start < len(places) and len(found) < limit:
            chunk = slice(start, start + size)
            candidates = [int(seq) for seq in seqs[places[chunk]]]
            visible = vector_rows.visible_memories(cursor, soul, candidates, viewer=viewer)
            for seq, score in zip(candidates, scores[chunk], strict=True):
                memory = visible.get(seq)
                if memory is not None:
                    found.append((memory, float(score) / (SCALE * SCALE)))
            start, size = start + size, size * 4
        return found[:limit]

    def forget(self, soul: str) -> None:
        """Drop this process's copy of ``soul``'s vectors (read again at the next search)."""
        with self.lock:
            self.souls.pop(soul, None)
