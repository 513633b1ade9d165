"""Bounded, curated blocks: *keep in every chat*, stored selections, and curation choices.

- ``engine_items.keep`` (0 or 1) is whether a member marked the item *keep in every chat*;
  ``engine_keeps`` is its history (from a revision on, as ``engine_scopes`` is for scope), so a
  past revision's block is chosen with the marks it had then.
- ``engine_souls.bounded_from``: the first revision whose blocks are bounded by the budget. A soul
  that existed before this migration renders its revisions up to today's head as it always did
  (every visible memory), so a block pinned before the upgrade keeps its bytes; a new soul has 0.
- ``engine_selections``: the selection each (soul, revision, viewer) block renders, stored the
  first time it is asked (item seqs in order with the scope each had, how many visible memories it
  left out, and the budget it was chosen within), so it renders the same bytes for ever.
- ``engine_curations``: each curation choice for a pool (``''``: household; a member id: that
  member's private memories), from the revision it moved the head to; ``engine_curation_checks``
  when each pool was last looked at (at most once per 20 new memories or once an hour).
"""

from yoyo import step

from reference_engine.storage.migrations_support import run_for_dialect

__depends__ = {"0001_initial"}

COMMON = [
    "ALTER TABLE engine_items ADD COLUMN keep INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE engine_souls ADD COLUMN bounded_from BIGINT NOT NULL DEFAULT 0",
    # Every revision a soul has today was made before blocks had a budget: it keeps its bytes.
    "UPDATE engine_souls SET bounded_from = head + 1",
    """CREATE TABLE engine_keeps (
        item_seq BIGINT NOT NULL, rev BIGINT NOT NULL, keep INTEGER NOT NULL,
        PRIMARY KEY (item_seq, rev))""",
    """CREATE TABLE engine_selections (
        soul TEXT NOT NULL, rev BIGINT NOT NULL, viewer TEXT NOT NULL, budget BIGINT NOT NULL,
        held TEXT NOT NULL, visible BIGINT NOT NULL, left_out BIGINT NOT NULL,
        PRIMARY KEY (soul, viewer, rev))""",
    """CREATE TABLE engine_curations (
        soul TEXT NOT NULL, pool TEXT NOT NULL, rev BIGINT NOT NULL, chosen TEXT NOT NULL,
        judged_by TEXT NOT NULL, notes TEXT NOT NULL, at TEXT NOT NULL,
        PRIMARY KEY (soul, pool, rev))""",
    """CREATE TABLE engine_curation_checks (
        soul TEXT NOT NULL, pool TEXT NOT NULL, checked_at DOUBLE PRECISION NOT NULL,
        checked_seq BIGINT NOT NULL, PRIMARY KEY (soul, pool))""",
    # The newest of each pool, without reading the others: household, and a member's own.
    "CREATE INDEX engine_items_scope_seq ON engine_items (soul, scope, seq)",
    "CREATE INDEX engine_items_owner_seq ON engine_items (soul, owner, seq)",
    "CREATE INDEX engine_items_kept ON engine_items (soul, seq) WHERE keep = 1",
    # What changed between two revisions (a block's count of what it left out, kept up to date).
    "CREATE INDEX engine_items_added ON engine_items (soul, added_rev)",
    "CREATE INDEX engine_scopes_rev ON engine_scopes (rev)",
    "CREATE INDEX engine_keeps_rev ON engine_keeps (rev)",
]

steps = [step(run_for_dialect(sqlite=COMMON, postgres=COMMON))]
