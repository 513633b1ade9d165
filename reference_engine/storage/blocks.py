"""Bounded blocks as rows: the candidates of one (revision, viewer), its stored selection, and the
count of what it leaves out.

A block is chosen once, the first time (revision, viewer) is asked, from the soul's history at that
revision (items added by then and neither forgotten nor replaced by a newer memory yet, with the
scope and the *keep* mark each had then, and the curation choices made by then; the newest is the
one added or said again last by then), and the selection is stored
(``engine_selections``): every later ask renders the same items from it, so the same bytes,
whatever curation, restarts or other revisions do meanwhile. A block whose held item has since
been forgotten, or is no longer visible to its viewer, is gone (:class:`~..souls.RevisionGone`);
one replaced since is not (its words are kept in history, so the block renders as it did).

Nothing here reads every memory of a soul: candidates come newest first from an index, a page at a
time, and the count of visible memories is carried forward from the viewer's previous selection
by what changed in between (one full count the first time a viewer's block is chosen).
"""

import json
from dataclasses import dataclass
from typing import Any

from reference_engine.selection import Candidate, choose, room_for_lines
from reference_engine.souls import RevisionGone, is_visible
from reference_engine.storage.database import Cursor
from reference_engine.storage.revisions import revision_name

PAGE = 200
"""Candidates read from one pool at a time, newest first."""
MOST_PAGES = 5
"""Pages read from one pool at most: what a block of any sane budget could hold, and then some."""
MOST_CHANGES = 2000
"""Changes carried forward into a count at most; past that a full count is cheaper."""

AT_REVISION = """
SELECT i.seq, i.text, i.owner, i.forgotten_rev,
  COALESCE((SELECT s.scope FROM engine_scopes s WHERE s.item_seq = i.seq AND s.rev <= ?
            ORDER BY s.rev DESC LIMIT 1), i.scope),
  COALESCE((SELECT k.keep FROM engine_keeps k WHERE k.item_seq = i.seq AND k.rev <= ?
            ORDER BY k.rev DESC LIMIT 1), 0),
  i.id, i.touched_rev, i.added_rev,
  COALESCE((SELECT h.by_seq FROM engine_supersessions h WHERE h.item_seq = i.seq
            AND h.rev <= ? ORDER BY h.rev DESC LIMIT 1), 0)
FROM engine_items i
WHERE i.soul = ? AND +i.added_rev <= ? AND (+i.forgotten_rev IS NULL OR +i.forgotten_rev > ?)"""
"""Items as they were at a revision: ``(seq, text, owner, forgotten_rev, scope then, keep then,
id, touched_rev, added_rev, replaced then)``; a row replaced then (the last column is the seq of
the memory that replaced it, 0 when current) is no candidate (:meth:`Candidates.current`).
The revision tests are kept off the indexes (``+``) and the replacement is read per row, not
filtered on, so each pool is read newest first from its own index, never sorted whole (a filter
on the replacement made PostgreSQL expect few rows and sort the whole soul)."""
SCOPE_CHANGED_AFTER = (
    "EXISTS (SELECT 1 FROM engine_scopes c WHERE c.item_seq = i.seq AND c.rev > ?)"
)
KEEP_CHANGED_AFTER = "EXISTS (SELECT 1 FROM engine_keeps c WHERE c.item_seq = i.seq AND c.rev > ?)"


@dataclass(frozen=True)
class Selection:
    """What one (revision, viewer) block holds: ``(seq, private)`` pairs in render order."""

    held: list[tuple[int, bool]]
    visible: int
    budget: int

    @property
    def left_out(self) -> int:
        return self.visible - len(self.held)


def viewer_key(viewer: str | None) -> str:
    """The stored viewer: a member id, or ``''`` for an unattended run (ids are never empty)."""
    return viewer or ""


def head_and_bounded_from(cursor: Cursor, soul: str) -> tuple[int, int]:
    """The soul's head and its first bounded revision (those before render every visible
    memory), in one read; ``(0, 0)`` for a soul that never changed."""
    row = cursor.run("SELECT head, bounded_from FROM engine_souls WHERE soul = ?", [soul]).one()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def stored_selection(cursor: Cursor, soul: str, rev: int, viewer: str | None) -> Selection | None:
    row = cursor.run(
        "SELECT held, visible, budget FROM engine_selections "
        "WHERE soul = ? AND viewer = ? AND rev = ?",
        [soul, viewer_key(viewer), rev],
    ).one()
    if row is None:
        return None
    held = [(int(seq), bool(private)) for seq, private in json.loads(row[0])]
    return Selection(held=held, visible=int(row[1]), budget=int(row[2]))


def store_selection(
    cursor: Cursor, soul: str, rev: int, viewer: str | None, selection: Selection
) -> int | None:
    """Keep ``selection`` for (revision, viewer) unless one is kept already (then that one
    stands: two engines choosing at once chose the same). The soul's head as the keeping
    statement saw it when this one was kept, None when it was not; one statement, so on
    PostgreSQL one round trip."""
    held = json.dumps([[seq, int(private)] for seq, private in selection.held])
    row = cursor.run(
        "INSERT INTO engine_selections (soul, rev, viewer, budget, held, visible, left_out) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (soul, viewer, rev) DO NOTHING "
        "RETURNING (SELECT head FROM engine_souls WHERE soul = ?)",
        [
            soul,
            rev,
            viewer_key(viewer),
            selection.budget,
            held,
            selection.visible,
            selection.left_out,
            soul,
        ],
    ).one()
    return None if row is None else int(row[0] or 0)


def held_rows(
    cursor: Cursor, soul: str, rev: int, viewer: str | None, selection: Selection
) -> list[tuple[str, Candidate]]:
    """``(id, candidate)`` of each held item, in render order; :class:`RevisionGone` when one was
    forgotten since, or is no longer visible to ``viewer``."""
    if not selection.held:
        return []
    seqs = [seq for seq, _ in selection.held]
    places = ", ".join("?" * len(seqs))
    rows = cursor.run(
        "SELECT seq, id, text, owner, scope, forgotten_rev FROM engine_items "
        f"WHERE soul || '' = ? AND seq IN ({places})",  # noqa: S608 - placeholders only
        [soul, *seqs],
    ).all()
    found = {int(row[0]): row for row in rows}
    held = []
    for seq, private in selection.held:
        row = found.get(seq)
        if row is None or row[5] is not None:
            raise RevisionGone(revision_name(rev))
        if not is_visible(scope=row[4], owner=row[3], viewer=viewer):
            raise RevisionGone(revision_name(rev))
        held.append((row[1], Candidate(seq=seq, text=row[2], private=private)))
    return held


class Candidates:
    """Reads the candidates of one (revision, viewer) block; ``at_head`` when the revision is
    the soul's head (no scope or mark has changed since, so indexes answer directly)."""

    def __init__(
        self, cursor: Cursor, soul: str, rev: int, viewer: str | None, *, at_head: bool
    ) -> None:
        self.cursor, self.soul, self.rev, self.viewer, self.at_head = (
            cursor,
            soul,
            rev,
            viewer,
            at_head,
        )
        self.ids: dict[int, str] = {}
        """The id of each candidate read, by its sequence number."""
        self.added: dict[int, int] = {}
        """The revision that added each candidate read, by its sequence number."""

    def rows(
        self, where: str, params: list[Any], *, limit: int, order: str = "i.seq"
    ) -> list[tuple[Any, ...]]:
        sql = f"{AT_REVISION} AND {where} ORDER BY {order} DESC LIMIT ?"
        base = [self.rev, self.rev, self.rev, self.soul, self.rev, self.rev]
        return self.cursor.run(sql, [*base, *params, limit]).all()

    def visible_then(self, row: tuple[Any, ...]) -> bool:
        return self.current(row) and is_visible(scope=row[4], owner=row[2], viewer=self.viewer)

    @staticmethod
    def current(row: tuple[Any, ...]) -> bool:
        """Whether the row's memory was current at the revision (not replaced then)."""
        return int(row[9]) == 0

    def candidate(self, row: tuple[Any, ...]) -> Candidate:
        """The row as a candidate; a row forgotten since this revision makes the block gone (its
        words are no longer kept, so no block holding it can be made)."""
        if row[3] is not None:
            raise RevisionGone(revision_name(self.rev))
        self.ids[int(row[0])] = row[6]
        self.added[int(row[0])] = int(row[8])
        return Candidate(seq=int(row[0]), text=row[1], private=row[4] == "private")

    def pool_filter(self, pool: str) -> tuple[str, list[Any]]:
        if pool == "private":
            return "i.owner = ?", [self.viewer]
        if self.at_head:
            return "i.scope = 'household'", []
        return f"(i.scope = 'household' OR {SCOPE_CHANGED_AFTER})", [self.rev]

    def in_pool(self, row: tuple[Any, ...], pool: str) -> bool:
        if not self.current(row):
            return False
        if pool == "private":
            return row[4] == "private" and row[2] == self.viewer
        return row[4] == "household"

    def newest(self, pool: str, room: int) -> list[Candidate]:
        """The pool's memories newest first, a page at a time, until they fill ``room``."""
        if pool == "private" and self.viewer is None:
            return []
        where, params = self.pool_filter(pool)
        found: list[Candidate] = []
        wanted, before = 0, None
        for _ in range(MOST_PAGES):
            page_where = where if before is None else f"{where} AND i.seq < ?"
            page_params = params if before is None else [*params, before]
            rows = self.rows(page_where, page_params, limit=PAGE)
            for row in rows:
                if self.in_pool(row, pool):
                    found.append(self.candidate(row))
                    wanted += len(found[-1].line) + 1
            if len(rows) < PAGE or wanted > room:
                break
            before = int(rows[-1][0])
        return found

    def maybe_visible(self) -> tuple[str, list[Any]]:
        """A filter keeping every row the viewer may have seen at this revision (household or
        their own now, or rescoped since), so other members' private memories never fill a
        limit before :meth:`visible_then` decides."""
        if self.at_head:
            return "(i.scope = 'household' OR i.owner = ?)", [self.viewer]
        return (
            f"(i.scope = 'household' OR i.owner = ? OR {SCOPE_CHANGED_AFTER})",
            [self.viewer, self.rev],
        )

    def kept(self) -> list[Candidate]:
        """Memories marked *keep in every chat* at this revision that the viewer may see."""
        seen, seen_params = self.maybe_visible()
        if self.at_head:
            where, params = f"i.keep = 1 AND {seen}", seen_params
        else:
            where = f"(i.keep = 1 OR {KEEP_CHANGED_AFTER}) AND {seen}"
            params = [self.rev, *seen_params]
        rows = self.rows(where, params, limit=PAGE * MOST_PAGES)
        return [self.candidate(r) for r in rows if r[5] and self.visible_then(r)]

    def said_again(self) -> tuple[Candidate, int] | None:
        """The memory the viewer may see that was last said again by this revision (a remember
        of the same words), with the revision it was said again at; None when there is none."""
        seen, seen_params = self.maybe_visible()
        rows = self.rows(
            f"i.touched_rev IS NOT NULL AND i.touched_rev <= ? AND {seen}",
            [self.rev, *seen_params],
            limit=PAGE,
            order="i.touched_rev",
        )
        for row in rows:
            if self.visible_then(row):
                return self.candidate(row), int(row[7])
        return None

    def curated(self, pool: str) -> list[Candidate]:
        """The pool's memories the latest curation by this revision chose, in its order."""
        if pool == "private" and self.viewer is None:
            return []
        row = self.cursor.run(
            "SELECT chosen FROM engine_curations WHERE soul = ? AND pool = ? AND rev <= ? "
            "ORDER BY rev DESC LIMIT 1",
            [self.soul, self.viewer if pool == "private" else "", self.rev],
        ).one()
        chosen = [int(seq) for seq in json.loads(row[0])] if row else []
        if not chosen:
            return []
        places = ", ".join("?" * len(chosen))
        rows = self.rows(f"i.seq IN ({places})", chosen, limit=len(chosen))
        by_seq = {int(r[0]): r for r in rows if self.in_pool(r, pool)}
        return [self.candidate(by_seq[seq]) for seq in chosen if seq in by_seq]


def choose_selection(
    cursor: Cursor, soul: str, rev: int, viewer: str | None, *, at_head: bool, budget: int
) -> tuple[Selection, list[tuple[str, Candidate]]]:
    """The block of (revision, viewer) by the fair rule (:func:`~..selection.choose`), with
    ``(id, candidate)`` of each held item in render order, as read at the revision."""
    room = room_for_lines(budget)
    found = Candidates(cursor, soul, rev, viewer, at_head=at_head)
    private = found.newest("private", room)
    household = found.newest("household", room)
    newest = max([*private[:1], *household[:1]], key=lambda c: c.seq, default=None)
    again = found.said_again()
    if again is not None and (newest is None or again[1] > found.added[newest.seq]):
        newest = again[0]  # said again after the newest was added: it is the most recent
    held = choose(
        newest=newest,
        kept=found.kept(),
        private=found.curated("private") + private,
        household=found.curated("household") + household,
        budget=budget,
    )
    visible = visible_count(cursor, soul, rev, viewer)
    selection = Selection(held=[(c.seq, c.private) for c in held], visible=visible, budget=budget)
    return selection, [(found.ids[c.seq], c) for c in held]


def visible_count(cursor: Cursor, soul: str, rev: int, viewer: str | None) -> int:
    """How many memories ``viewer`` may see at ``rev``: the count of the viewer's previous
    selection carried forward by what changed since, or a full count when there is none."""
    row = cursor.run(
        "SELECT rev, visible FROM engine_selections WHERE soul = ? AND viewer = ? AND rev < ? "
        "ORDER BY rev DESC LIMIT 1",
        [soul, viewer_key(viewer), rev],
    ).one()
    if row is not None:
        carried = carried_count(cursor, soul, int(row[0]), rev, viewer, int(row[1]))
        if carried is not None:
            return carried
    return full_count(cursor, soul, rev, viewer)


REPLACED_AT = """(SELECT h.by_seq FROM engine_supersessions h WHERE h.item_seq = i.seq
   AND h.rev <= ? ORDER BY h.rev DESC LIMIT 1)"""
"""The seq of the memory that replaced the item at a revision (0 or NULL: it was current)."""
VISIBLE_AT = f"""
SELECT i.seq, i.owner, i.added_rev, i.forgotten_rev, i.scope,
  (SELECT s.scope FROM engine_scopes s WHERE s.item_seq = i.seq AND s.rev <= ?
   ORDER BY s.rev DESC LIMIT 1),
  (SELECT s.scope FROM engine_scopes s WHERE s.item_seq = i.seq AND s.rev <= ?
   ORDER BY s.rev DESC LIMIT 1),
  {REPLACED_AT}, {REPLACED_AT}
FROM engine_items i WHERE """
"""Items as two revisions saw them: ``(seq, owner, added_rev, forgotten_rev, scope now, scope at
the first, scope at the second, replaced by at the first, replaced by at the second)``; its
parameters: the two revisions, then the two again."""


def visible_at(
    row: tuple[Any, ...], at: int, scope: str | None, replaced: Any, viewer: str | None
) -> bool:
    """Whether the item of a :data:`VISIBLE_AT` row was visible to ``viewer`` at ``at``
    (``replaced``: the seq that replaced it then, if any)."""
    added = int(row[2]) <= at
    alive = (row[3] is None or int(row[3]) > at) and not replaced
    seen = scope is not None and is_visible(scope=scope, owner=row[1], viewer=viewer)
    return added and alive and seen


def carried_count(
    cursor: Cursor, soul: str, since: int, rev: int, viewer: str | None, count: int
) -> int | None:
    """``count`` (visible at ``since``) carried to ``rev`` by the items added, forgotten,
    rescoped, replaced or restored in between; None when more changed than is worth reading one
    by one."""
    ranges = [
        "i.soul = ? AND i.added_rev > ? AND i.added_rev <= ?",
        "i.soul = ? AND i.forgotten_rev > ? AND i.forgotten_rev <= ?",
        # ``+``: found through the changes (few), not through every item of the soul
        "i.soul || '' = ? AND i.seq IN (SELECT item_seq FROM engine_scopes WHERE rev > ? AND rev <= ?)",
        "i.soul || '' = ? AND i.seq IN "
        "(SELECT item_seq FROM engine_supersessions WHERE rev > ? AND rev <= ?)",
    ]
    # one query (one round trip): each kind of change read up to its own limit, tagged
    parts = [
        f"SELECT * FROM ({VISIBLE_AT} {where} LIMIT ?) AS changed{n}"
        for n, where in enumerate(ranges)
    ]
    rows = cursor.run(
        " UNION ALL ".join(parts),
        [since, rev, since, rev, soul, since, rev, MOST_CHANGES + 1] * len(ranges),
    ).all()
    touched: dict[int, tuple[Any, ...]] = {}
    for row in rows:
        touched[int(row[0])] = row
    if len(rows) > MOST_CHANGES:  # more than is worth reading one by one
        return None
    for row in touched.values():
        count += int(visible_at(row, rev, row[6], row[8], viewer)) - int(
            visible_at(row, since, row[5], row[7], viewer)
        )
    return count


def full_count(cursor: Cursor, soul: str, rev: int, viewer: str | None) -> int:
    """How many memories ``viewer`` may see at ``rev``, counted (once per viewer: later counts
    are carried forward from it)."""
    row = cursor.run(
        "SELECT count(*) FROM engine_items i WHERE i.soul = ? AND i.added_rev <= ? "
        "AND (i.forgotten_rev IS NULL OR i.forgotten_rev > ?) "
        f"AND COALESCE({REPLACED_AT}, 0) = 0 "
        "AND (i.scope = 'household' OR i.owner = ?)",
        [soul, rev, rev, rev, viewer],
    ).one()
    count = int(row[0]) if row else 0
    # An item whose scope changed after ``rev`` was counted by its scope now: count it as then.
    changed = cursor.run(
        f"{VISIBLE_AT} i.soul || '' = ? AND i.seq IN (SELECT item_seq FROM engine_scopes WHERE rev > ?)",
        [rev, rev, rev, rev, soul, rev],
    ).all()
    for row in changed:
        counted = visible_at(row, rev, row[4], row[7], viewer)
        count += int(visible_at(row, rev, row[5], row[7], viewer)) - int(counted)
    return count
