"""One memory per fact: the same words kept once, and an update replacing what it corrects.

- ``engine_items.same_key``: the item's words with case, spacing and end punctuation set aside
  (:func:`reference_engine.selection.same_words`), indexed for current items, so a remember of
  the same words is one indexed lookup. Every item kept before this migration gets its key here.
- ``engine_items.touched_rev``: the revision a remember of the same words last made the item the
  most recent (NULL: never repeated).
- ``engine_items.superseded_rev`` / ``superseded_by``: the revision from which a newer memory
  (its seq) replaced the item (NULL: current). ``engine_supersessions`` is that history, from a
  revision on (``by_seq`` 0: restored), as ``engine_scopes`` is for scope, so a past revision's
  block is chosen with what was current then.
- ``engine_decisions``: every judgement of a new memory against an older one (the door's choice,
  its confidence and reason, the brain call) or a member's correction, and what came of it.
- ``engine_truth_checks``: per soul, the last item the thinker looked at for an older memory it
  may replace; memories kept before this migration are never judged (nothing of them changes).
"""

from yoyo import step

from reference_engine.selection import same_words
from reference_engine.storage.migrations_support import is_sqlite, run_for_dialect

__depends__ = {"0004_recall_meaning"}

COMMON = [
    "ALTER TABLE engine_items ADD COLUMN same_key TEXT",
    "ALTER TABLE engine_items ADD COLUMN touched_rev BIGINT",
    "ALTER TABLE engine_items ADD COLUMN superseded_rev BIGINT",
    "ALTER TABLE engine_items ADD COLUMN superseded_by BIGINT",
    """CREATE TABLE engine_supersessions (
        item_seq BIGINT NOT NULL, rev BIGINT NOT NULL, by_seq BIGINT NOT NULL,
        PRIMARY KEY (item_seq, rev))""",
    "CREATE INDEX engine_supersessions_rev ON engine_supersessions (rev)",
    """CREATE TABLE engine_decisions (
        id TEXT PRIMARY KEY, soul TEXT NOT NULL, new_seq BIGINT NOT NULL, old_seq BIGINT,
        choice TEXT, confidence DOUBLE PRECISION, reason TEXT NOT NULL, brain_call TEXT,
        judged_by TEXT NOT NULL, outcome TEXT NOT NULL, rev BIGINT, at TEXT NOT NULL)""",
    "CREATE INDEX engine_decisions_new ON engine_decisions (new_seq)",
    "CREATE INDEX engine_decisions_old ON engine_decisions (old_seq)",
    "CREATE INDEX engine_decisions_failed ON engine_decisions (soul, outcome)",
    """CREATE TABLE engine_truth_checks (
        soul TEXT PRIMARY KEY, checked_seq BIGINT NOT NULL)""",
    "INSERT INTO engine_truth_checks (soul, checked_seq) "
    "SELECT soul, COALESCE((SELECT max(seq) FROM engine_items i WHERE i.soul = s.soul), 0) "
    "FROM engine_souls s",
    "CREATE INDEX engine_items_same ON engine_items (soul, same_key) "
    "WHERE forgotten_rev IS NULL AND superseded_rev IS NULL",
    "CREATE INDEX engine_items_touched ON engine_items (soul, touched_rev) "
    "WHERE touched_rev IS NOT NULL",
]


def fill_keys(connection: object) -> None:
    """Every kept item's same-words key, computed as a remember computes it."""
    cursor = connection.cursor()  # type: ignore[attr-defined]
    mark = "?" if is_sqlite(connection) else "%s"
    try:
        cursor.execute("SELECT seq, text FROM engine_items WHERE forgotten_rev IS NULL")
        keys = [(same_words(text), seq) for seq, text in cursor.fetchall()]
        cursor.executemany(f"UPDATE engine_items SET same_key = {mark} WHERE seq = {mark}", keys)
    finally:
        cursor.close()


steps = [step(run_for_dialect(sqlite=COMMON, postgres=COMMON)), step(fill_keys)]
