"""Meaning vectors as rows (``engine_vectors``): written with their memory, read by the
in-memory index (:mod:`reference_engine.meaning`), and filled in for memories kept before the
engine had them (the start-up backfill)."""

from reference_engine.souls import Memory
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import COLUMNS, live_among, memory_of

RECHECK = 64
"""Rows before the last one read that a refresh reads again: on PostgreSQL a row with a smaller
``vseq`` may commit after a larger one."""


def vectors_since(cursor: Cursor, soul: str, vseq: int) -> list[tuple[int, int, bytes]]:
    """``(vseq, item_seq, vec)`` of the soul's vectors written after ``vseq``, in order."""
    rows = cursor.run(
        "SELECT vseq, item_seq, vec FROM engine_vectors WHERE soul = ? AND vseq > ? ORDER BY vseq",
        [soul, vseq],
    ).all()
    return [(int(v), int(s), bytes(vec)) for v, s, vec in rows]


def visible_memories(
    cursor: Cursor, soul: str, seqs: list[int], *, viewer: str | None
) -> dict[int, Memory]:
    """Those of ``seqs`` that are live items of ``soul`` ``viewer`` may see, by seq."""
    if not seqs:
        return {}
    rows = cursor.run(live_among(COLUMNS, "seq", len(seqs)), [soul, *seqs, viewer]).all()
    return {int(row[0]): memory_of(row) for row in rows}


def lacking_vectors(cursor: Cursor, *, after: int, limit: int) -> list[tuple[int, str, str]]:
    """``(seq, soul, text)`` of up to ``limit`` live items after seq ``after`` with no vector."""
    return [
        (int(seq), soul, text)
        for seq, soul, text in cursor.run(
            "SELECT i.seq, i.soul, i.text FROM engine_items i "
            "LEFT JOIN engine_vectors v ON v.item_seq = i.seq "
            "WHERE v.item_seq IS NULL AND i.forgotten_rev IS NULL AND i.seq > ? "
            "ORDER BY i.seq LIMIT ?",
            [after, limit],
        ).all()
    ]


def count_lacking(cursor: Cursor) -> int:
    row = cursor.run(
        "SELECT COUNT(*) FROM engine_items i LEFT JOIN engine_vectors v ON v.item_seq = i.seq "
        "WHERE v.item_seq IS NULL AND i.forgotten_rev IS NULL"
    ).one()
    return int(row[0]) if row else 0


def fill_vector(cursor: Cursor, seq: int, vec: bytes) -> None:
    """The vector of an item kept before vectors existed, unless it was forgotten meanwhile or
    was given one already."""
    cursor.run(
        "INSERT INTO engine_vectors (item_seq, soul, vec) "
        "SELECT seq, soul, ? FROM engine_items WHERE seq = ? AND forgotten_rev IS NULL "
        "ON CONFLICT (item_seq) DO NOTHING",
        [vec, seq],
    )
