"""Memory that stays true, as rows: one memory replacing another (and restored), the decisions
that did it, and the thinker's place in the soul's new memories.

Every function here runs inside the caller's transaction (a :class:`Cursor`). A replacement or a
restore moves the soul's head and is kept in ``engine_supersessions`` from that revision on, so
every revision's block is chosen with what was current then (:mod:`.blocks`); the replaced item's
words, id and vector are kept, so it stays in history and can be restored.
"""

import uuid
from dataclasses import dataclass
from typing import Any

from reference_engine.souls import is_visible, now_iso
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import LIVE
from reference_engine.storage.revisions import move_head

REPLACED = "replaced"
"""Outcome: the older memory was replaced by the newer."""
ADDS_NOTHING = "adds nothing"
"""Outcome: the newer memory said nothing the older did not; it is the one replaced."""
KEPT_BOTH = "kept both"
DOOR_FAILED = "door failed"
CORRECTED = "corrected"
"""Outcome: a member gave new words for a memory on the memory page (their own decision)."""
RESTORED = "restored"
"""Outcome: a member made a replaced memory current again."""
CHANGED = (REPLACED, ADDS_NOTHING, CORRECTED)
"""Outcomes that replaced one of the two memories."""


@dataclass(frozen=True)
class Fresh:
    """A current memory the thinker has not judged yet."""

    seq: int
    id: str
    text: str
    at: str
    scope: str
    owner: str | None


def replace(cursor: Cursor, soul: str, old_seq: int, new_seq: int) -> int:
    """Mark ``old_seq`` replaced by ``new_seq`` from a new revision; the new head."""
    head = move_head(cursor, soul)
    cursor.run(
        "UPDATE engine_items SET superseded_rev = ?, superseded_by = ? WHERE seq = ?",
        [head, new_seq, old_seq],
    )
    cursor.run(
        "INSERT INTO engine_supersessions (item_seq, rev, by_seq) VALUES (?, ?, ?)",
        [old_seq, head, new_seq],
    )
    return head


def restore(cursor: Cursor, soul: str, seq: int) -> int:
    """Make a replaced item current again from a new revision; the new head."""
    head = move_head(cursor, soul)
    cursor.run(
        "UPDATE engine_items SET superseded_rev = NULL, superseded_by = NULL WHERE seq = ?", [seq]
    )
    cursor.run(
        "INSERT INTO engine_supersessions (item_seq, rev, by_seq) VALUES (?, ?, 0)", [seq, head]
    )
    return head


def is_current(cursor: Cursor, seq: int, *, scope: str) -> bool:
    """Whether the item is current and still has ``scope``."""
    row = cursor.run(
        f"SELECT 1 FROM engine_items WHERE seq = ? AND scope = ? AND {LIVE}", [seq, scope]
    ).one()
    return row is not None


def replaced_by(cursor: Cursor, seq: int) -> int | None:
    """The seq of the memory that replaced the item (None: it is current, or forgotten)."""
    row = cursor.run(
        "SELECT superseded_by FROM engine_items WHERE seq = ? AND forgotten_rev IS NULL", [seq]
    ).one()
    return int(row[0]) if row and row[0] is not None else None


def record_decision(
    cursor: Cursor,
    soul: str,
    *,
    new_seq: int,
    old_seq: int | None,
    outcome: str,
    reason: str,
    judged_by: str,
    choice: str | None = None,
    confidence: float | None = None,
    brain_call: str | None = None,
    rev: int | None = None,
) -> str:
    """Keep one decision (or one failed try at one); its id."""
    decision_id = f"dec_{uuid.uuid4().hex[:16]}"
    cursor.run(
        "INSERT INTO engine_decisions (id, soul, new_seq, old_seq, choice, confidence, reason, "
        "brain_call, judged_by, outcome, rev, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            decision_id,
            soul,
            new_seq,
            old_seq,
            choice,
            confidence,
            reason[:2000],
            brain_call,
            judged_by,
            outcome,
            rev,
            now_iso(),
        ],
    )
    return decision_id


def checked_seq(cursor: Cursor, soul: str) -> int:
    row = cursor.run("SELECT checked_seq FROM engine_truth_checks WHERE soul = ?", [soul]).one()
    return int(row[0]) if row else 0


def mark_checked(cursor: Cursor, soul: str, seq: int) -> None:
    larger = "GREATEST" if cursor.postgres else "MAX"
    cursor.run(
        "INSERT INTO engine_truth_checks (soul, checked_seq) VALUES (?, ?) ON CONFLICT (soul) "
        f"DO UPDATE SET checked_seq = {larger}(engine_truth_checks.checked_seq, excluded.checked_seq)",
        [soul, seq],
    )


FRESH = "SELECT seq, id, text, at, scope, owner FROM engine_items"


def unjudged(cursor: Cursor, soul: str, *, limit: int) -> list[Fresh]:
    """Current memories of ``soul`` kept since the thinker last looked, oldest first."""
    rows = cursor.run(
        f"{FRESH} WHERE soul = ? AND seq > ? AND {LIVE} "
        "AND seq NOT IN (SELECT new_seq FROM engine_decisions WHERE soul = ?) "
        "ORDER BY seq LIMIT ?",
        [soul, checked_seq(cursor, soul), soul, limit],
    ).all()
    return [Fresh(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]


def failed_once(cursor: Cursor, soul: str, *, before: str, limit: int) -> list[Fresh]:
    """Current memories whose one try at a decision failed (before ``before``, an ISO time) and
    that were never tried again: each gets one more try."""
    rows = cursor.run(
        f"{FRESH} i WHERE seq IN (SELECT new_seq FROM engine_decisions WHERE soul = ? "
        "GROUP BY new_seq HAVING count(*) = 1 AND min(outcome) = ? AND max(at) < ?) "
        f"AND {LIVE} ORDER BY seq LIMIT ?",
        [soul, DOOR_FAILED, before, limit],
    ).all()
    return [Fresh(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]


def fresh_of(cursor: Cursor, seq: int) -> Fresh | None:
    row = cursor.run(f"{FRESH} WHERE seq = ? AND {LIVE}", [seq]).one()
    return Fresh(int(row[0]), row[1], row[2], row[3], row[4], row[5]) if row else None


def decision_shape(row: tuple[Any, ...]) -> dict[str, Any]:
    """A decision as items carry it: the choice, confidence, reason, brain call and outcome."""
    _old, choice, confidence, reason, brain_call, judged_by, outcome, at = row
    return {
        "choice": choice,
        "confidence": None if confidence is None else float(confidence),
        "reason": reason,
        "brain_call": brain_call,
        "judged_by": judged_by,
        "outcome": outcome,
        "at": at,
    }


def truth_of(cursor: Cursor, seqs: list[int], *, viewer: str | None) -> dict[int, dict[str, Any]]:
    """For each of ``seqs``: ``supersedes`` (the memory it replaced last, ``{id, text, at}``, when
    ``viewer`` may see it), ``superseded_by`` (``{id, at}``, when it was replaced by one
    ``viewer`` may see) and ``decision`` (the last decision about it, or None; its reason is
    :data:`REASON_WITHHELD` unless ``viewer`` may see both memories it judged, neither forgotten,
    or the engine worded it)."""
    found: dict[int, dict[str, Any]] = {
        seq: {"supersedes": None, "superseded_by": None, "decision": None} for seq in seqs
    }
    if not seqs:
        return found
    marks = ", ".join("?" * len(seqs))
    pairs = cursor.run(
        "SELECT h.item_seq, h.by_seq, h.rev, o.id, o.text, o.scope, o.owner, o.superseded_by, "
        "n.id, n.scope, n.owner, (SELECT d.at FROM engine_decisions d WHERE d.rev = h.rev "
        "AND d.old_seq IN (h.item_seq, h.by_seq) LIMIT 1) "
        "FROM engine_supersessions h JOIN engine_items o ON o.seq = h.item_seq "
        "JOIN engine_items n ON n.seq = h.by_seq "
        f"WHERE h.by_seq > 0 AND (h.by_seq IN ({marks}) OR h.item_seq IN ({marks})) "  # noqa: S608
        "AND o.forgotten_rev IS NULL AND n.forgotten_rev IS NULL ORDER BY h.rev",
        [*seqs, *seqs],
    ).all()
    for old, new, _rev, old_id, text, scope, owner, still_by, new_id, n_scope, n_owner, at in pairs:
        if still_by is None or int(still_by) != int(new):
            continue  # restored since (or replaced again by another)
        if int(new) in found and is_visible(scope=scope, owner=owner, viewer=viewer):
            found[int(new)]["supersedes"] = {"id": old_id, "text": text, "at": at}
        if int(old) in found and is_visible(scope=n_scope, owner=n_owner, viewer=viewer):
            found[int(old)]["superseded_by"] = {"id": new_id, "at": at}
    decisions = cursor.run(
        "SELECT d.new_seq, d.old_seq, d.choice, d.confidence, d.reason, d.brain_call, "
        "d.judged_by, d.outcome, d.at, n.scope, n.owner, n.forgotten_rev, o.scope, o.owner, "
        "o.forgotten_rev FROM engine_decisions d LEFT JOIN engine_items n ON n.seq = d.new_seq "
        "LEFT JOIN engine_items o ON o.seq = d.old_seq "
        f"WHERE d.new_seq IN ({marks}) OR d.old_seq IN ({marks}) "  # noqa: S608
        "ORDER BY d.at, COALESCE(d.rev, 0), d.id",
        [*seqs, *seqs],
    ).all()
    for row in decisions:
        new_seq, old_seq = int(row[0]), row[1]
        decision = decision_shape(row[1:9])
        own_words = row[7] in ENGINE_WORDED
        if not own_words and not both_shown(row[9:], about_two=old_seq is not None, viewer=viewer):
            decision["reason"] = REASON_WITHHELD
        if new_seq in found:
            found[new_seq]["decision"] = decision
        if old_seq is not None and int(old_seq) in found and row[7] in CHANGED:
            found[int(old_seq)]["decision"] = decision
    return found


REASON_WITHHELD = "Not shown: the reason speaks of a memory you cannot see."
"""A decision's reason in place of its words when either memory it judged is forgotten or not
the viewer's to see: a vessel's reason often quotes both memories."""
ENGINE_WORDED = frozenset({CORRECTED, RESTORED})
"""Outcomes whose reason is the engine's own fixed sentence, which quotes no memory."""


def both_shown(sides: tuple[Any, ...], *, about_two: bool, viewer: str | None) -> bool:
    """Whether ``viewer`` may see every memory a decision judged: ``sides`` are the newer's
    scope, owner and forgotten revision, then the older's (None where there is no such row);
    ``about_two`` says it judged an older one too."""
    new_scope, new_owner, new_gone, old_scope, old_owner, old_gone = sides
    if new_gone is not None or not is_visible(scope=new_scope, owner=new_owner, viewer=viewer):
        return False
    if not about_two:
        return True
    return old_gone is None and is_visible(scope=old_scope, owner=old_owner, viewer=viewer)
