"""The engine's schema as the first migration: the tables every engine before migrations made.

Every statement says ``IF NOT EXISTS``, so a database an older engine wrote (its tables made at
start-up, with no migration record) is adopted as it is, with nothing read or changed.
``engine_souls`` holds each soul's head counter: revision ``r<n>`` is the soul's state after its
n-th change. ``engine_items`` keeps every memory with the revision that added it and the one that
forgot it; ``engine_scopes`` each item's scope from a revision on; ``engine_events`` turn-event ids
(idempotency); ``engine_asks`` each ask and its answer. Full text: an FTS5 table on SQLite, a
``tsvector`` column with a GIN index on PostgreSQL.
"""

from yoyo import step

from reference_engine.storage.migrations_support import run_for_dialect

COMMON = [
    "CREATE TABLE IF NOT EXISTS engine_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS engine_souls (soul TEXT PRIMARY KEY, head BIGINT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS engine_scopes (
        item_seq BIGINT NOT NULL, rev BIGINT NOT NULL, scope TEXT NOT NULL,
        PRIMARY KEY (item_seq, rev))""",
    """CREATE TABLE IF NOT EXISTS engine_events (
        id TEXT PRIMARY KEY, soul TEXT NOT NULL, received_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS engine_asks (
        id TEXT PRIMARY KEY, soul TEXT NOT NULL, conversation TEXT NOT NULL,
        question TEXT NOT NULL, viewer TEXT, asked_at TEXT NOT NULL, ready_at DOUBLE PRECISION
        NOT NULL, answer_id TEXT, answer TEXT, answered_at TEXT, acked INTEGER NOT NULL DEFAULT 0)""",
    "CREATE INDEX IF NOT EXISTS engine_asks_open ON engine_asks (conversation, acked)",
    # The thinker's look for due asks (made by its thread at start-up before migrations).
    "CREATE INDEX IF NOT EXISTS engine_asks_due ON engine_asks (ready_at) WHERE answer_id IS NULL",
]

ITEM_COLUMNS = """
        id TEXT NOT NULL UNIQUE, soul TEXT NOT NULL, text TEXT NOT NULL, words TEXT NOT NULL,
        at TEXT NOT NULL, scope TEXT NOT NULL, owner TEXT, owner_name TEXT,
        src_conversation TEXT, src_message TEXT, src_tool_use TEXT,
        added_rev BIGINT NOT NULL, forgotten_rev BIGINT"""

SQLITE = [
    f"CREATE TABLE IF NOT EXISTS engine_items (seq INTEGER PRIMARY KEY AUTOINCREMENT, {ITEM_COLUMNS})",
    """CREATE VIRTUAL TABLE IF NOT EXISTS engine_items_fts USING fts5(
        text, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'")""",
]

POSTGRES = [
    f"""CREATE TABLE IF NOT EXISTS engine_items (
        seq BIGSERIAL PRIMARY KEY, {ITEM_COLUMNS},
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED)""",
    # Without fast update a search never scans GIN's pending list of unmerged entries (megabytes
    # of them, read on every query until a vacuum merges them); each insert costs a little more.
    "CREATE INDEX IF NOT EXISTS engine_items_tsv ON engine_items USING GIN (tsv) WITH (fastupdate = off)",
    "ALTER INDEX engine_items_tsv SET (fastupdate = off)",
]

INDEXES = [
    "CREATE INDEX IF NOT EXISTS engine_items_live ON engine_items (soul, forgotten_rev, seq)",
    "CREATE INDEX IF NOT EXISTS engine_items_owner ON engine_items (soul, owner)",
    "INSERT INTO engine_meta (name, value) VALUES ('schema_version', '1') "
    "ON CONFLICT (name) DO NOTHING",
]

steps = [
    step(run_for_dialect(sqlite=COMMON + SQLITE + INDEXES, postgres=COMMON + POSTGRES + INDEXES))
]
