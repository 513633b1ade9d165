"""A soul's whole memory as rows that move between engines: every live item read in pages, oldest
first, with its history; and items taken in by their ids, idempotently.

Every function here runs inside the caller's transaction (a :class:`Cursor`). Forgotten items are
never read out (a forget stays a forget), and an id this engine forgot is never taken in again.
Taking items in moves the soul's head once, forward, like any other change, so a conversation
pinned before re-pins; it never overwrites an item already kept.
"""

from dataclasses import dataclass
from typing import Any

from reference_engine.embedding import vector_bytes
from reference_engine.selection import same_words
from reference_engine.souls import SCOPES, NoOwner
from reference_engine.storage import truth
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import (
    COLUMNS,
    INSERT_ITEM,
    INSERT_VECTOR,
    memory_of,
    same_memory,
    word_column,
)
from reference_engine.storage.revisions import move_head, revision_name


class ImportConflict(ValueError):
    """An item of an import that cannot be taken as it is: its id is kept with another text, or
    by another soul, or named twice with two texts. Nothing of the batch is kept."""

    def __init__(self, item_id: str, why: str) -> None:
        super().__init__(f"Item {item_id!r} {why}; nothing of this batch was imported.")
        self.item_id = item_id


@dataclass(frozen=True)
class Imported:
    """What one import batch did: items added, items already kept with the same text, and items
    this engine forgot (left forgotten)."""

    added: int
    present: int
    forgotten: int


EXPORTED = (
    "forgotten_rev IS NULL AND (superseded_rev IS NULL OR EXISTS (SELECT 1 FROM engine_items n "
    "WHERE n.seq = engine_items.superseded_by AND n.forgotten_rev IS NULL))"
)
"""What an export carries: every memory not forgotten, current or replaced by one that is not
forgotten either (a replaced memory whose replacement was forgotten stays with this engine)."""


def export_page(cursor: Cursor, soul: str, *, after: int, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` items of ``soul`` after sequence number ``after`` (:data:`EXPORTED`), oldest
    first, each in the contract's item shape with ``seq`` (for the next cursor), its ``history``
    and ``superseded_by`` (``{id, at}`` of the newer memory that replaced it, or None)."""
    rows = cursor.run(
        f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND {EXPORTED} AND seq > ? "
        "ORDER BY seq LIMIT ?",
        [soul, after, limit],
    ).all()
    memories = [memory_of(row) for row in rows]
    changes = history_of(cursor, [m.seq for m in memories])
    replaced = replaced_by(cursor, [m.seq for m in memories])
    return [
        {
            **m.item(),
            "seq": m.seq,
            "history": changes.get(m.seq, []),
            "superseded_by": replaced.get(m.seq),
        }
        for m in memories
    ]


def replaced_by(cursor: Cursor, seqs: list[int]) -> dict[int, dict[str, str]]:
    """``{id, at}`` of the memory that replaced each of ``seqs`` that is replaced (``at``: when
    that memory was said)."""
    if not seqs:
        return {}
    marks = ", ".join("?" * len(seqs))
    rows = cursor.run(
        "SELECT o.seq, n.id, n.at FROM engine_items o JOIN engine_items n ON n.seq = o.superseded_by "
        f"WHERE o.seq IN ({marks}) AND o.superseded_rev IS NOT NULL",  # noqa: S608
        seqs,
    ).all()
    return {int(seq): {"id": item_id, "at": at} for seq, item_id, at in rows}


def history_of(cursor: Cursor, seqs: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Each item's changes by revision, oldest first: the scope it had from each revision on
    (the first is when it was kept) and each *keep in every chat* mark or unmark."""
    if not seqs:
        return {}
    marks = ", ".join("?" * len(seqs))
    found: dict[int, list[tuple[int, str, Any]]] = {}
    for table, name in (("engine_scopes", "scope"), ("engine_keeps", "keep")):
        rows = cursor.run(
            f"SELECT item_seq, rev, {name} FROM {table} WHERE item_seq IN ({marks})",  # noqa: S608
            seqs,
        ).all()
        for seq, rev, value in rows:
            found.setdefault(int(seq), []).append((int(rev), name, value))
    return {
        seq: [
            {"revision": revision_name(rev), "change": name, "to": bool(v) if name == "keep" else v}
            for rev, name, v in sorted(changes, key=lambda c: (c[0], c[1]))
        ]
        for seq, changes in found.items()
    }


def import_items(
    cursor: Cursor, soul: str, items: list[dict[str, Any]], *, write: bool = True, floor: int = 0
) -> Imported:
    """Keep each of ``items`` (the contract's item shape) not kept yet, by its id, with its text,
    time, scope, owner, source and keep mark, at one new revision of ``soul``.

    An id already kept by ``soul`` with the same text is left as it is (``present``), and so is an
    item whose words (case, spacing and end punctuation aside) a current memory of the same owner
    in the same scope holds already, as a remember of them would be; an id it forgot stays
    forgotten (``forgotten``). :class:`ImportConflict` for an id kept with another
    text or by another soul, or named twice with two texts; :class:`NoOwner` for a private item
    no member said. Raised before anything is written, so the caller's transaction keeps nothing.
    With ``write`` False, only the checks run and the counts are what a write would do. ``floor``
    is the head of the engine the items came from: the new revision is past it, so no revision
    the household's conversations were pinned to there is ever named again here.
    """
    wanted: dict[str, dict[str, Any]] = {}
    for item in items:
        earlier = wanted.get(item["id"])
        if earlier is not None and earlier["text"] != item["text"]:
            raise ImportConflict(item["id"], "is named twice in the batch with two texts")
        if item["scope"] not in SCOPES:
            raise ValueError(f"scope must be one of {list(SCOPES)}")
        if item["scope"] == "private" and not item["said_by"]:
            raise NoOwner(f"Item {item['id']!r} is private but no member said it.")
        wanted[item["id"]] = item
    kept = kept_with_ids(cursor, list(wanted))
    replacing = {i["superseded_by"]["id"] for i in wanted.values() if i.get("superseded_by")}
    known = kept_with_ids(cursor, sorted(replacing - set(wanted)))
    for item in wanted.values():
        by = (item.get("superseded_by") or {}).get("id")
        if by is None or by in wanted or not write:  # a check alone cannot see earlier batches
            continue
        if by not in known or known[by][0] != soul or known[by][2]:
            raise ImportConflict(
                item["id"], f"is replaced by {by!r}, which this soul does not keep: import it first"
            )
    present = forgotten = 0
    for item_id, (owner_soul, text, gone) in kept.items():
        if owner_soul != soul:
            raise ImportConflict(item_id, "is kept by another soul of this engine")
        if gone:
            forgotten += 1
        elif text != wanted[item_id]["text"]:
            raise ImportConflict(item_id, "is kept here with another text")
        else:
            present += 1
    fresh: list[dict[str, Any]] = []
    words_kept: dict[tuple[str, str, str], str] = {}
    instead: dict[str, str] = {}  # an item left out for the same words: the id that stands for it
    for item_id, item in wanted.items():
        if item_id in kept:
            continue
        if item.get("superseded_by"):  # history: never the same fact as a current memory
            fresh.append(item)
            continue
        owner = (item["said_by"] or {}).get("member")
        words = (same_words(item["text"]), item["scope"], owner or "")
        said = same_memory(cursor, soul, text=item["text"], scope=item["scope"], owner=owner)
        stands_for = words_kept.get(words) or (said[1] if said is not None else None)
        if stands_for is not None:
            present += 1  # the same words of the same owner in the same scope: one memory
            instead[item_id] = stands_for
            continue
        words_kept[words] = item_id
        fresh.append(item)
    if fresh and write:
        raise_head(cursor, soul, floor)
        add_items(cursor, soul, fresh, instead=instead)
    return Imported(added=len(fresh), present=present, forgotten=forgotten)


def link_replaced(
    cursor: Cursor, items: list[dict[str, Any]], head: int, instead: dict[str, str]
) -> None:
    """Mark each of ``items`` that names the memory that replaced it as replaced by it (or by the
    memory kept for it, ``instead``), from the import's revision ``head`` (both are kept by now:
    checked before anything was written)."""
    for item in items:
        by = (item.get("superseded_by") or {}).get("id")
        if by is None:
            continue
        by = instead.get(by, by)
        row = cursor.run(
            "SELECT o.seq, n.seq FROM engine_items o, engine_items n WHERE o.id = ? AND n.id = ?",
            [item["id"], by],
        ).one()
        assert row is not None
        cursor.run(
            "UPDATE engine_items SET superseded_rev = ?, superseded_by = ? WHERE seq = ?",
            [head, row[1], row[0]],
        )
        cursor.run(
            "INSERT INTO engine_supersessions (item_seq, rev, by_seq) VALUES (?, ?, ?)",
            [row[0], head, row[1]],
        )


def kept_with_ids(cursor: Cursor, ids: list[str]) -> dict[str, tuple[str, str, bool]]:
    """``id: (soul, text, forgotten)`` for each of ``ids`` this engine keeps, live or forgotten."""
    found: dict[str, tuple[str, str, bool]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = cursor.run(
            f"SELECT id, soul, text, forgotten_rev FROM engine_items WHERE id IN ({marks})",  # noqa: S608
            chunk,
        ).all()
        for item_id, owner_soul, text, forgotten_rev in rows:
            found[item_id] = (owner_soul, text, forgotten_rev is not None)
    return found


def raise_head(cursor: Cursor, soul: str, floor: int) -> None:
    """Move the soul's head up to ``floor`` when it is below it (never down)."""
    if floor <= 0:
        return
    larger = "GREATEST" if cursor.postgres else "MAX"
    cursor.run(
        "INSERT INTO engine_souls (soul, head) VALUES (?, ?) ON CONFLICT (soul) DO UPDATE "
        f"SET head = {larger}(engine_souls.head, excluded.head)",
        [soul, floor],
    )


def add_items(
    cursor: Cursor, soul: str, items: list[dict[str, Any]], *, instead: dict[str, str]
) -> int:
    """Keep ``items`` as they are (ids, times, owners), each with its meaning vector, at one new
    revision, those that name what replaced them as replaced by it (``instead``: the id kept for
    one left out for its words); the new head."""
    head = move_head(cursor, soul)
    before = cursor.run("SELECT max(seq) FROM engine_items WHERE soul = ?", [soul]).one()
    judged_all = truth.checked_seq(cursor, soul) >= int((before or [0])[0] or 0)
    vectors = vector_bytes([item["text"] for item in items])
    for item, vector in zip(items, vectors, strict=True):
        said_by, source = item["said_by"] or {}, item["source"]
        row = cursor.run(
            f"{INSERT_ITEM} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            [
                item["id"],
                soul,
                item["text"],
                word_column(item["text"]),
                item["at"],
                item["scope"],
                said_by.get("member"),
                said_by.get("name"),
                source.get("conversation"),
                source.get("message"),
                source.get("tool_use"),
                same_words(item["text"]),
                head,
            ],
        ).one()
        assert row is not None
        seq = int(row[0])
        cursor.run(
            "INSERT INTO engine_scopes (item_seq, rev, scope) VALUES (?, ?, ?)",
            [seq, head, item["scope"]],
        )
        if item.get("keep"):
            cursor.run("UPDATE engine_items SET keep = 1 WHERE seq = ?", [seq])
            cursor.run(
                "INSERT INTO engine_keeps (item_seq, rev, keep) VALUES (?, ?, 1)", [seq, head]
            )
        if not cursor.postgres:
            cursor.run(
                "INSERT INTO engine_items_fts (rowid, text) VALUES (?, ?)", [seq, item["text"]]
            )
        cursor.run(INSERT_VECTOR, [seq, soul, vector])
    link_replaced(cursor, items, head, instead)
    if judged_all:  # what an import brings was judged where it came from: not judged again
        after = cursor.run("SELECT max(seq) FROM engine_items WHERE soul = ?", [soul]).one()
        truth.mark_checked(cursor, soul, int((after or [0])[0] or 0))
    return head
