"""Revisions: each soul's head counter, and the block a revision shows a viewer.

Revision ``r<n>`` names the soul's items after its n-th change. The counter is a row updated in
the same transaction as the change, so it only moves forward, across restarts and across engine
processes sharing one database. A block is rebuilt from the items' added and forgotten revisions
and their scope history, so a revision's block renders the same bytes every time, or is gone.
"""

from reference_engine.souls import (
    RevisionGone,
    UnknownRevision,
    is_visible,
    render_block,
)
from reference_engine.storage.database import Cursor


def revision_name(number: int) -> str:
    return f"r{number}"


def revision_number(name: str) -> int:
    """The counter value a revision name stands for; :class:`UnknownRevision` when none."""
    if not name.startswith("r") or not name[1:].isdigit():
        raise UnknownRevision(name)
    return int(name[1:])


def head_number(cursor: Cursor, soul: str) -> int:
    """The soul's head counter (0 for a soul that never changed)."""
    row = cursor.run("SELECT head FROM engine_souls WHERE soul = ?", [soul]).one()
    return int(row[0]) if row else 0


HEAD_MOVE = (
    "INSERT INTO engine_souls (soul, head) VALUES (?, 1) "
    "ON CONFLICT (soul) DO UPDATE SET head = engine_souls.head + 1 RETURNING head"
)
"""Move a soul's head one step (its first change makes it 1); the statement returns the head."""


def move_head(cursor: Cursor, soul: str) -> int:
    """Move the soul's head one step (inside the caller's write transaction); the new number."""
    row = cursor.run(HEAD_MOVE, [soul]).one()
    assert row is not None
    return int(row[0])


BLOCK_ROWS = """
SELECT i.id, i.text, i.owner, i.scope, i.forgotten_rev,
       (SELECT s.scope FROM engine_scopes s WHERE s.item_seq = i.seq AND s.rev <= ?
        ORDER BY s.rev DESC LIMIT 1)
FROM engine_items i
WHERE i.soul = ? AND i.added_rev <= ? AND (i.forgotten_rev IS NULL OR i.forgotten_rev > ?)
ORDER BY i.seq
"""


def block_at(cursor: Cursor, soul: str, number: int, viewer: str | None) -> tuple[list[str], str]:
    """``(item ids, block text)`` of revision ``number`` as ``viewer`` sees it.

    Raises :class:`UnknownRevision` past the head, or :class:`RevisionGone` when the block held
    an item since forgotten or no longer visible to ``viewer``.
    """
    if number > head_number(cursor, soul):
        raise UnknownRevision(revision_name(number))
    rows = cursor.run(BLOCK_ROWS, [number, soul, number, number]).all()
    held = [r for r in rows if is_visible(scope=r[5], owner=r[2], viewer=viewer)]
    for _id, _text, owner, scope_now, forgotten, _then in held:
        if forgotten is not None or not is_visible(scope=scope_now, owner=owner, viewer=viewer):
            raise RevisionGone(revision_name(number))
    return [r[0] for r in held], render_block([(r[1], r[5]) for r in held])
