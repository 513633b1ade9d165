"""Ranked recall: the full-text index finds items holding any word of the query (OR, stop words
dropped); the item holding more of the query's words ranks first, then the index's own score
(BM25 on SQLite, ``ts_rank`` on PostgreSQL), then the most recent. Visibility is part of the
query, so a limit never hides a visible match behind an invisible one.
"""

from reference_engine.souls import Memory
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import COLUMNS, LIVE, VISIBLE, memory_of

MAX_WORDS = 16  # a pasted paragraph still makes a query the index answers quickly

SELECTED = ", ".join(f"i.{name.strip()}" for name in COLUMNS.split(","))


def coverage(words: list[str], *, postgres: bool) -> str:
    """SQL counting how many of ``words`` an item holds, one ``?`` per word."""
    test = "(strpos(i.words, ?) > 0)::int" if postgres else "(instr(i.words, ?) > 0)"
    return " + ".join([test] * len(words))


def ranked_matches(
    cursor: Cursor, soul: str, words: set[str], *, viewer: str | None, limit: int
) -> list[Memory]:
    """The visible live items holding any of ``words``, best first, at most ``limit``."""
    chosen = sorted(words)[:MAX_WORDS]
    if not chosen:
        return []
    framed = [f" {word} " for word in chosen]
    score = coverage(chosen, postgres=cursor.postgres)
    visible = VISIBLE.replace("scope", "i.scope").replace("owner", "i.owner")
    if cursor.postgres:
        query = " || ".join(["plainto_tsquery('simple', ?)"] * len(chosen))
        sql = (
            f"SELECT {SELECTED} FROM engine_items i, (SELECT {query}) AS q(tsq) "
            f"WHERE i.tsv @@ q.tsq AND i.soul = ? AND i.{LIVE} AND {visible} "
            f"ORDER BY {score} DESC, ts_rank(i.tsv, q.tsq) DESC, i.seq DESC LIMIT ?"
        )
        params = [*chosen, soul, viewer, *framed, limit]
    else:
        match = " OR ".join('"' + word.replace('"', '""') + '"' for word in chosen)
        # CROSS JOIN keeps the full-text match the outer loop: SQLite may otherwise walk every
        # live item of the soul and run the match once per item.
        sql = (
            f"SELECT {SELECTED} FROM engine_items_fts f CROSS JOIN engine_items i "
            "ON i.seq = f.rowid "
            f"WHERE engine_items_fts MATCH ? AND i.soul = ? AND i.{LIVE} AND {visible} "
            f"ORDER BY {score} DESC, bm25(engine_items_fts), i.seq DESC LIMIT ?"
        )
        params = [match, soul, viewer, *framed, limit]
    return [memory_of(row) for row in cursor.run(sql, params).all()]


def most_recent(cursor: Cursor, soul: str, *, viewer: str | None, limit: int) -> list[Memory]:
    """The ``limit`` most recent live items ``viewer`` may see, newest first."""
    rows = cursor.run(
        f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND {LIVE} AND {VISIBLE} "
        "ORDER BY seq DESC LIMIT ?",
        [soul, viewer, limit],
    ).all()
    return [memory_of(row) for row in rows]
