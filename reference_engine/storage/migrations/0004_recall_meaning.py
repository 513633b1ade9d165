"""Recall by meaning, and words stemmed with stop words dropped.

- ``engine_vectors``: each memory's meaning as an int8 vector (:mod:`reference_engine.meaning`),
  one row per item, written in the transaction that keeps the item; ``vseq`` counts rows in the
  order they were written, so a process's in-memory copy reads only what is new. Memories kept
  before this migration have none until the engine's start-up backfill gives them one.
- Full text stems words and drops stop words: on SQLite the FTS5 table is made again with the
  ``porter`` tokenizer over ``unicode61`` (diacritics removed) and every live item re-indexed; on
  PostgreSQL ``tsv`` becomes a column a trigger writes with the text-search configuration
  ``engine_meta``'s ``text_language`` names (``english`` here; the engine re-indexes the items at
  start for another ``PIPPA_ENGINE_LANGUAGE``).
"""

from yoyo import step

from reference_engine.storage.migrations_support import run_for_dialect

__depends__ = {"0003_block_selection"}

SQLITE = [
    """CREATE TABLE engine_vectors (
        vseq INTEGER PRIMARY KEY AUTOINCREMENT, item_seq BIGINT NOT NULL UNIQUE,
        soul TEXT NOT NULL, vec BLOB NOT NULL)""",
    "DROP TABLE IF EXISTS engine_items_fts",
    """CREATE VIRTUAL TABLE engine_items_fts USING fts5(
        text, tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'")""",
    "INSERT INTO engine_items_fts (rowid, text) "
    "SELECT seq, text FROM engine_items WHERE forgotten_rev IS NULL",
]

POSTGRES = [
    """CREATE TABLE engine_vectors (
        vseq BIGSERIAL PRIMARY KEY, item_seq BIGINT NOT NULL UNIQUE,
        soul TEXT NOT NULL, vec BYTEA NOT NULL)""",
    "ALTER TABLE engine_items DROP COLUMN tsv",
    "ALTER TABLE engine_items ADD COLUMN tsv tsvector",
    "INSERT INTO engine_meta (name, value) VALUES ('text_language', 'english') "
    "ON CONFLICT (name) DO UPDATE SET value = 'english'",
    # The item's words in the language engine_meta names, whenever its text is written; a
    # start with another language re-indexes the items (storage/language.py), no DDL needed.
    """CREATE FUNCTION engine_items_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.tsv := to_tsvector((SELECT value FROM engine_meta WHERE name = 'text_language')
            ::regconfig, NEW.text);
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER engine_items_tsv BEFORE INSERT OR UPDATE OF text ON engine_items "
    "FOR EACH ROW EXECUTE FUNCTION engine_items_tsv()",
    "UPDATE engine_items SET tsv = to_tsvector('english'::regconfig, text)",
    "CREATE INDEX engine_items_tsv ON engine_items USING GIN (tsv) WITH (fastupdate = off)",
]

COMMON = ["CREATE INDEX engine_vectors_soul ON engine_vectors (soul, vseq)"]

steps = [step(run_for_dialect(sqlite=SQLITE + COMMON, postgres=POSTGRES + COMMON))]
