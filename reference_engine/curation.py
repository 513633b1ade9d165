"""Curation: which memories a block should hold first, judged through the brain door's ``curate``
role, in the engine's background thinker (never on a pin's path).

A soul's memories fall in pools that blocks share fairly (:mod:`.selection`): the household's
(pool ``''``) and each member's private ones (pool: the member id). A pool is curated when it has
outgrown the budget (its newest memories alone would fill a block), and then at most once per
:data:`EVERY_NEW` new memories or once per :data:`EVERY_SECONDS` with something new. The door is
offered only that pool's memories (a member's private memories are never offered beside another
member's): the previous choice still kept, then the newest, at most :data:`MOST_OFFERED`.

A choice is a row (``engine_curations``) from a revision on. One that changes what blocks hold
moves the head first, as a remember does, so no revision's block ever changes. The offline vessel
does not reason: its choice is the newest (nothing chosen), recorded with ``judged_by`` saying so.
A failed, refused or slow door changes nothing: the last choice plus the newest memories serve.
"""

import hashlib
import json
import logging
import time
from typing import Any

from reference_engine.brain_client import BrainClient, DoorFailed
from reference_engine.selection import room_for_lines
from reference_engine.souls import now_iso
from reference_engine.storage.database import Cursor
from reference_engine.storage.revisions import head_number, move_head

logger = logging.getLogger(__name__)

EVERY_NEW = 20
EVERY_SECONDS = 3600.0
CHECK_SECONDS = 60.0
"""How often the thinker looks for pools due for curation."""
ROUND_SECONDS = 30.0
"""A round of curation calls ends within this, as an unattended run's engine calls do."""
MOST_OFFERED = 200
"""The ``curate`` role's limit on items offered."""
GOAL = (
    "These are memories a household keeps. Keep the ones most useful to bring into every new "
    "conversation (lasting facts, preferences, plans, who is who), most useful first; drop the "
    "ones that are trivial, stale, or said again elsewhere."
)
NEWEST = "newest: the offline vessel does not reason, so the newest memories serve"


def pool_filter(pool: str) -> tuple[str, list[Any]]:
    """SQL (and its parameters) keeping the live memories of ``pool``."""
    if pool:
        return "scope = 'private' AND owner = ? AND forgotten_rev IS NULL", [pool]
    return "scope = 'household' AND forgotten_rev IS NULL", []


def newest_of(cursor: Cursor, soul: str, pool: str, limit: int) -> list[tuple[int, str, str]]:
    """``(seq, id, text)`` of the pool's newest memories, newest first."""
    where, params = pool_filter(pool)
    sql = f"SELECT seq, id, text FROM engine_items WHERE soul = ? AND {where} "  # noqa: S608
    rows = cursor.run(sql + "ORDER BY seq DESC LIMIT ?", [soul, *params, limit]).all()
    return [(int(seq), item_id, text) for seq, item_id, text in rows]


def latest_choice(cursor: Cursor, soul: str, pool: str) -> list[int]:
    row = cursor.run(
        "SELECT chosen FROM engine_curations WHERE soul = ? AND pool = ? ORDER BY rev DESC LIMIT 1",
        [soul, pool],
    ).one()
    return [int(seq) for seq in json.loads(row[0])] if row else []


def record_choice(
    cursor: Cursor, soul: str, pool: str, chosen: list[int], *, judged_by: str, notes: str
) -> bool:
    """Record a curation choice; True when it changed what blocks hold (the head moved first)."""
    changed = chosen != latest_choice(cursor, soul, pool)
    rev = move_head(cursor, soul) if changed else head_number(cursor, soul)
    cursor.run(
        "INSERT INTO engine_curations (soul, pool, rev, chosen, judged_by, notes, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (soul, pool, rev) DO NOTHING",
        [soul, pool, rev, json.dumps(chosen), judged_by, notes[:2000], now_iso()],
    )
    return changed


def mark_checked(cursor: Cursor, soul: str, pool: str, at: float, seq: int) -> None:
    cursor.run(
        "INSERT INTO engine_curation_checks (soul, pool, checked_at, checked_seq) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (soul, pool) DO UPDATE SET "
        "checked_at = excluded.checked_at, checked_seq = excluded.checked_seq",
        [soul, pool, at, seq],
    )


class Curator:
    """Curates the pools of ``state``'s souls through ``brain`` (see the module docstring)."""

    def __init__(self, state: Any, brain: BrainClient) -> None:
        self.state, self.brain = state, brain
        self.last_look = 0.0

    def due_pools(self, cursor: Cursor, now: float) -> list[tuple[str, str]]:
        """``(soul, pool)`` of each pool that outgrew the budget and has news enough."""
        due = []
        for (soul,) in cursor.run("SELECT soul FROM engine_souls ORDER BY soul").all():
            owners = cursor.run(
                "SELECT DISTINCT owner FROM engine_items WHERE soul = ? AND scope = 'private' "
                "AND forgotten_rev IS NULL AND owner IS NOT NULL ORDER BY owner",
                [soul],
            ).all()
            for pool in ["", *(owner for (owner,) in owners)]:
                if self.is_due(cursor, soul, pool, now):
                    due.append((soul, pool))
        return due

    def is_due(self, cursor: Cursor, soul: str, pool: str, now: float) -> bool:
        newest = newest_of(cursor, soul, pool, MOST_OFFERED)
        wanted = sum(len(text) + 4 for _, _, text in newest)
        if not newest or wanted <= room_for_lines(self.state.block_chars) // 3:
            return False  # it still fits its share: nothing to choose
        row = cursor.run(
            "SELECT checked_at, checked_seq FROM engine_curation_checks "
            "WHERE soul = ? AND pool = ?",
            [soul, pool],
        ).one()
        if row is None:
            return True
        fresh = sum(1 for seq, _, _ in newest if seq > int(row[1]))
        return fresh >= EVERY_NEW or (fresh > 0 and now - float(row[0]) >= EVERY_SECONDS)

    def curate_due(self, *, force: bool = False) -> int:
        """One round (at most every :data:`CHECK_SECONDS` unless ``force``): each due pool
        curated, until the round's time is spent. Returns how many choices moved the head."""
        now = self.state.clock()
        if not force and now - self.last_look < CHECK_SECONDS:
            return 0
        self.last_look = now
        with self.state.database.read() as cursor:
            due = self.due_pools(cursor, now)
        ends = time.monotonic() + ROUND_SECONDS
        moved = 0
        for soul, pool in due:
            if time.monotonic() >= ends:
                break
            moved += int(self.curate(soul, pool))
        return moved

    def curate(self, soul: str, pool: str) -> bool:
        """Curate one pool now; True when the choice moved the head."""
        with self.state.database.read() as cursor:
            before = latest_choice(cursor, soul, pool)
            newest = newest_of(cursor, soul, pool, MOST_OFFERED)
            kept = self.rows_of(cursor, soul, pool, before)
        offered = list({seq: (seq, i, t) for seq, i, t in [*kept, *newest]}.values())
        offered = offered[:MOST_OFFERED]
        checked = (self.state.clock(), max((seq for seq, _, _ in newest), default=0))
        items = [{"id": item_id, "text": text} for _, item_id, text in offered]
        digest = hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:24]
        try:
            judgement = self.brain.curate(
                soul, {"goal": GOAL, "items": items}, webhook_id=f"engine_curate_{digest}"
            )
        except DoorFailed as failed:
            logger.warning(
                "Curating %s's memories failed (%s); the last choice serves", soul, failed
            )
            with self.state.database.write() as cursor:
                mark_checked(cursor, soul, pool, *checked)
            return False
        by_id = {item_id: seq for seq, item_id, _ in offered}
        if judgement.synthetic:
            chosen, judged_by, notes = [], NEWEST, str(judgement.output.get("notes", ""))
        else:
            chosen = [by_id[i] for i in dict.fromkeys(judgement.output["keep"]) if i in by_id]
            judged_by, notes = f"vessel {judgement.vessel}", str(judgement.output.get("notes", ""))
        with self.state.database.write() as cursor:
            moved = record_choice(cursor, soul, pool, chosen, judged_by=judged_by, notes=notes)
            mark_checked(cursor, soul, pool, *checked)
        return moved

    def rows_of(self, cursor: Cursor, soul: str, pool: str, seqs: list[int]) -> list[Any]:
        """``(seq, id, text)`` of the live pool memories among ``seqs``, in their order."""
        if not seqs:
            return []
        where, params = pool_filter(pool)
        places = ", ".join("?" * len(seqs))
        sql = f"SELECT seq, id, text FROM engine_items WHERE soul = ? AND {where} "  # noqa: S608
        rows = cursor.run(sql + f"AND seq IN ({places})", [soul, *params, *seqs]).all()
        found = {int(seq): (int(seq), item_id, text) for seq, item_id, text in rows}
        return [found[seq] for seq in seqs if seq in found]
