"""Each ask's answer keeps the ids of the memories it was made from (contract v3 ``items``).

An answer is checked like a block: the plug-in withholds one that holds an item since forgotten
or made private to someone else, and the engine drops an undelivered one built on an item it
forgets or makes private (:mod:`reference_engine.storage.asks`). An answer written before this
migration names no items, so nothing could check it: each one not yet delivered is taken back
(its ask stays, unanswered, and the thinker answers it afresh with its items). Delivered answers,
every ask, memory, revision and event are kept as they are.
"""

from yoyo import step

from reference_engine.storage.migrations_support import run_for_dialect

__depends__ = {"0001_initial"}

STATEMENTS = [
    "ALTER TABLE engine_asks ADD COLUMN answer_items TEXT",
    "UPDATE engine_asks SET answer_id = NULL, answer = NULL, answered_at = NULL "
    "WHERE acked = 0 AND answer_id IS NOT NULL",
]

steps = [step(run_for_dialect(sqlite=STATEMENTS, postgres=STATEMENTS))]
