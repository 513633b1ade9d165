"""The engine database's tables, created when missing; the same shapes on SQLite and PostgreSQL.

``engine_souls`` holds each soul's head counter: revision ``r<n>`` is the soul's state after its
n-th change, and the counter only moves forward, so a name never comes back with other contents.
``engine_items`` keeps every memory with the revision that added it and the one that forgot it
(a forgotten item keeps its id and revisions but loses its text). ``engine_scopes`` records each
item's scope from a revision on. ``engine_events`` holds turn-event ids (idempotency), and
``engine_asks`` each ask and its answer. Full text: an FTS5 table on SQLite, a ``tsvector``
column with a GIN index on PostgreSQL.
"""

from reference_engine.storage.database import Database

SCHEMA_VERSION = 1

COMMON = [
    """CREATE TABLE IF NOT EXISTS engine_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS engine_souls (soul TEXT PRIMARY KEY, head BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS engine_scopes (
        item_seq BIGINT NOT NULL, rev BIGINT NOT NULL, scope TEXT NOT NULL,
        PRIMARY KEY (item_seq, rev))""",
    """CREATE TABLE IF NOT EXISTS engine_events (
        id TEXT PRIMARY KEY, soul TEXT NOT NULL, received_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS engine_asks (
        id TEXT PRIMARY KEY, soul TEXT NOT NULL, conversation TEXT NOT NULL,
        question TEXT NOT NULL, viewer TEXT, asked_at TEXT NOT NULL, ready_at DOUBLE PRECISION
        NOT NULL, answer_id TEXT, answer TEXT, answered_at TEXT, acked INTEGER NOT NULL DEFAULT 0)""",
    """CREATE INDEX IF NOT EXISTS engine_asks_open ON engine_asks (conversation, acked)""",
]

ITEM_COLUMNS = """
        id TEXT NOT NULL UNIQUE, soul TEXT NOT NULL, text TEXT NOT NULL, words TEXT NOT NULL,
        at TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT, owner_name TEXT,
        src_conversation TEXT, src_message TEXT, src_tool_use TEXT,
        added_rev BIGINT NOT NULL, forgotten_rev BIGINT"""

SQLITE = [
    f"""CREATE TABLE IF NOT EXISTS engine_items (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, {ITEM_COLUMNS})""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS engine_items_fts USING fts5(
        text, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'")""",
]

POSTGRES = [
    f"""CREATE TABLE IF NOT EXISTS engine_items (
        seq BIGSERIAL PRIMARY KEY, {ITEM_COLUMNS},
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED)""",
    # Without fast update a search never scans GIN's pending list of unmerged entries (megabytes
    # of them, read on every query until a vacuum merges them); each insert costs a little more.
    """CREATE INDEX IF NOT EXISTS engine_items_tsv ON engine_items USING GIN (tsv)
        WITH (fastupdate = off)""",
    """ALTER INDEX engine_items_tsv SET (fastupdate = off)""",
]

INDEXES = [
    """CREATE INDEX IF NOT EXISTS engine_items_live ON engine_items (soul, forgotten_rev, seq)""",
    """CREATE INDEX IF NOT EXISTS engine_items_owner ON engine_items (soul, owner)""",
]


def create_tables(database: Database) -> None:
    """Create whatever is missing; an existing database is left as it is (no rows are read)."""
    statements = COMMON + (POSTGRES if database.postgres else SQLITE) + INDEXES
    with database.write() as cursor:
        if database.postgres:
            # Two engines starting at once on one PostgreSQL database must not race the DDL.
            cursor.run("SELECT pg_advisory_xact_lock(772531)")
        for statement in statements:
            cursor.run(statement)
        cursor.run(
            "INSERT INTO engine_meta (name, value) VALUES ('schema_version', ?) "
            "ON CONFLICT (name) DO NOTHING",
            [str(SCHEMA_VERSION)],
        )
