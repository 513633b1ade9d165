"""Taking in a turn event: its id claimed once (each event acts once) and the memories it left
kept, committed together before the engine answers.

On PostgreSQL an event that keeps at most one memory (almost every turn) is one statement in
autocommit: the claim, the head, the item, its scope row and its meaning vector commit in a single round trip, and
only when the claim was new. Other events, and every event on SQLite, run as one transaction.

A remember whose words its owner keeps already in the same scope (case, spacing and end
punctuation aside) keeps no second item: the one kept is made the most recent instead
(:func:`~.memories.keep_memory`); on PostgreSQL that lookup is a CTE of the same statement.
"""

from reference_engine.events import NewMemory
from reference_engine.selection import same_words
from reference_engine.souls import now_iso
from reference_engine.storage.asks import claim_event
from reference_engine.storage.database import Database
from reference_engine.storage.memories import (
    ITEM_UNLESS_SAME,
    SAME_WORDS,
    WITH_VECTOR,
    item_values,
    keep_memory,
    vector_values,
)

CLAIM = (
    "INSERT INTO engine_events (id, soul, received_at) VALUES (?, ?, ?) "
    "ON CONFLICT (id) DO NOTHING RETURNING id"
)
CLAIM_AND_ADD = f"""
WITH claimed AS ({CLAIM}),
same AS ({SAME_WORDS} AND EXISTS (SELECT 1 FROM claimed) ORDER BY seq DESC LIMIT 1),
head AS (
    INSERT INTO engine_souls (soul, head) SELECT ?, 1 FROM claimed
    ON CONFLICT (soul) DO UPDATE SET head = engine_souls.head + 1 RETURNING head),
touched AS (
    UPDATE engine_items SET at = ?, touched_rev = (SELECT head FROM head)
    WHERE seq = (SELECT seq FROM same) RETURNING seq),
{ITEM_UNLESS_SAME}{WITH_VECTOR}
SELECT count(*) FROM claimed"""


def record_turn(
    database: Database, *, event_id: str, soul: str, received_at: str, kept: list[NewMemory]
) -> bool:
    """Claim ``event_id`` and keep the memories ``kept``; False when the id was claimed before
    (nothing is kept again). Committed before it returns."""
    if database.postgres and len(kept) <= 1:
        claim = [event_id, soul, received_at]
        with database.statement() as cursor:
            if not kept:
                return cursor.run(CLAIM, claim).one() is not None
            new = kept[0]
            values = item_values(
                soul, text=new.text, scope=new.scope, said_by=new.said_by, source=new.source
            )
            owner = new.said_by["member"] if new.said_by else ""
            same = [soul, same_words(new.text), new.scope, owner]
            row = cursor.run(
                CLAIM_AND_ADD,
                [*claim, *same, soul, now_iso(), *values, *vector_values(soul, new.text)],
            ).one()
            return row is not None and int(row[0]) == 1
    with database.write() as cursor:
        if not claim_event(cursor, event_id, soul, received_at):
            return False
        for new in kept:
            keep_memory(cursor, soul, new)
    return True
