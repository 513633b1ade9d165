"""Ranked recall by words: the full-text index finds items holding any word of the query, each
word stemmed and stop words dropped (SQLite: FTS5's ``porter`` tokenizer over ``unicode61``;
PostgreSQL: the text-search configuration of the engine's language, the query parsed by the same
parser as the index, so e-mail addresses, URLs and dotted numbers match as they were written).
The item holding more of the query's words ranks first, then the index's own score (BM25 on
SQLite, ``ts_rank`` on PostgreSQL), then the most recent. Visibility is part of the query, so a
limit never hides a visible match behind an invisible one.

Every word of the query counts, however many; a pasted paragraph stays quick because the query is
read up to :data:`MAX_QUERY_CHARS` characters.
"""

from reference_engine.souls import Memory, words_of
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import COLUMNS, LIVE, VISIBLE, memory_of

MAX_QUERY_CHARS = 1000

#: English stop words (PostgreSQL's ``english`` configuration drops the same): they never match
#: by themselves.
ENGLISH_STOP_WORDS = frozenset(
    [
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "because",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "should",
        "now",
    ]
)

SELECTED = ", ".join(f"i.{name.strip()}" for name in COLUMNS.split(","))
#: PostgreSQL: the OR of the lexemes ``to_tsvector`` gives the query (the index's own parser),
#: as a tsquery; NULL when every word is a stop word (then nothing matches).
LEXEMES_OR = (
    "(SELECT string_agg('''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''', ' | ') "
    "FROM unnest(tsvector_to_array(to_tsvector(?::regconfig, ?))) AS l)::tsquery"
)


def query_words(query: str) -> list[str]:
    """The query's words that count (stop words dropped), in order, read up to the cap."""
    return sorted(words_of(query[:MAX_QUERY_CHARS]) - ENGLISH_STOP_WORDS)


def fts_match(words: list[str]) -> str:
    """SQLite: an FTS5 query matching any of ``words`` (each stemmed by the table's tokenizer)."""
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


def coverage(words: list[str], *, postgres: bool) -> str:
    """SQL counting how many of ``words`` an item holds, one ``?`` per word."""
    if not words:
        return "CAST(0 AS INTEGER)"  # a bare 0 in ORDER BY would name a column
    test = "(strpos(i.words, ?) > 0)::int" if postgres else "(instr(i.words, ?) > 0)"
    return " + ".join([test] * len(words))


def ranked_matches(
    cursor: Cursor,
    soul: str,
    query: str,
    *,
    viewer: str | None,
    limit: int,
    language: str = "english",
) -> list[Memory]:
    """The visible live items holding any word of ``query``, best first, at most ``limit``."""
    text = query[:MAX_QUERY_CHARS]
    words = query_words(text)
    framed = [f" {word} " for word in words]
    score = coverage(words, postgres=cursor.postgres)
    visible = VISIBLE.replace("scope", "i.scope").replace("owner", "i.owner")
    if cursor.postgres:
        sql = (
            f"SELECT {SELECTED} FROM engine_items i, (SELECT {LEXEMES_OR}) AS q(tsq) "
            f"WHERE i.tsv @@ q.tsq AND i.soul = ? AND i.{LIVE} AND {visible} "
            f"ORDER BY {score} DESC, ts_rank(i.tsv, q.tsq) DESC, i.seq DESC LIMIT ?"
        )
        params = [language, text, soul, viewer, *framed, limit]
    else:
        if not words:
            return []
        # CROSS JOIN keeps the full-text match the outer loop: SQLite may otherwise walk every
        # live item of the soul and run the match once per item.
        sql = (
            f"SELECT {SELECTED} FROM engine_items_fts f CROSS JOIN engine_items i "
            "ON i.seq = f.rowid "
            f"WHERE engine_items_fts MATCH ? AND i.soul = ? AND i.{LIVE} AND {visible} "
            f"ORDER BY {score} DESC, bm25(engine_items_fts), i.seq DESC LIMIT ?"
        )
        params = [fts_match(words), soul, viewer, *framed, limit]
    return [memory_of(row) for row in cursor.run(sql, params).all()]


def holding_words(
    cursor: Cursor, seqs: list[int], query: str, *, language: str = "english"
) -> set[int]:
    """Those of ``seqs`` holding a word of ``query`` as the full-text index sees it (stemmed)."""
    text = query[:MAX_QUERY_CHARS]
    if not seqs:
        return set()
    marks = ", ".join("?" * len(seqs))
    if cursor.postgres:
        sql = f"SELECT seq FROM engine_items WHERE seq IN ({marks}) AND tsv @@ {LEXEMES_OR}"  # noqa: S608
        params = [*seqs, language, text]
    else:
        words = query_words(text)
        if not words:
            return set()
        sql = (
            "SELECT rowid FROM engine_items_fts WHERE engine_items_fts MATCH ? "  # noqa: S608
            f"AND rowid IN ({marks})"
        )
        params = [fts_match(words), *seqs]
    return {int(row[0]) for row in cursor.run(sql, params).all()}


def most_recent(cursor: Cursor, soul: str, *, viewer: str | None, limit: int) -> list[Memory]:
    """The ``limit`` most recent live items ``viewer`` may see, newest first."""
    rows = cursor.run(
        f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND {LIVE} AND {VISIBLE} "
        "ORDER BY seq DESC LIMIT ?",
        [soul, viewer, limit],
    ).all()
    return [memory_of(row) for row in rows]
