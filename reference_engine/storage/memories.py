"""Memories as rows: adding, finding, listing, forgetting and changing the scope of items.

Every function here runs inside the caller's transaction (a :class:`Cursor`). A write moves the
soul's head (:mod:`.revisions`) in that same transaction. A forget keeps the item's id and
revisions, so old blocks know they are gone, but deletes its text, its full-text entry and its
meaning vector. A new item's vector (:mod:`reference_engine.embedding`) is written in the
transaction that keeps it.
"""

import uuid
from typing import Any

from reference_engine.embedding import vector_bytes
from reference_engine.events import NewMemory
from reference_engine.selection import same_words
from reference_engine.souls import SCOPES, Memory, NoOwner, UnknownItem, now_iso, words_of
from reference_engine.storage.database import Cursor
from reference_engine.storage.revisions import HEAD_MOVE, move_head

COLUMNS = (
    "seq, id, text, at, scope, owner, owner_name, src_conversation, src_message, src_tool_use, keep"
)
LIVE = "forgotten_rev IS NULL AND superseded_rev IS NULL"
"""A current item: neither forgotten nor replaced by a newer one (what blocks, recall, briefs,
bundles, listings and exports hold)."""
KEPT = "forgotten_rev IS NULL"
"""An item whose words are still kept: current, or replaced and still in history."""
VISIBLE = "(scope = 'household' OR owner = ?)"  # owner = NULL is never true
ORPHANED = (
    "forgotten_rev IS NULL AND superseded_rev IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
    "engine_items n WHERE n.seq = engine_items.superseded_by AND n.forgotten_rev IS NULL "
    "AND n.superseded_rev IS NULL AND (n.scope = 'household' OR n.owner = ?))"
)
"""A replaced item that no current memory the viewer (the one parameter) sees replaced: what
replaced it was since forgotten, was itself replaced, or is no longer visible to them. Such an
item shows under no current memory, so it is listed on its own to be restored."""


INSERT_ITEM = (
    "INSERT INTO engine_items (id, soul, text, words, at, scope, owner, owner_name, "
    "src_conversation, src_message, src_tool_use, same_key, added_rev)"
)
PLACES = ", ".join(["?"] * 13)
INSERT_VECTOR = "INSERT INTO engine_vectors (item_seq, soul, vec) VALUES (?, ?, ?)"
ITEM_AND_SCOPE = f"""item AS (
    {INSERT_ITEM} SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, head.head FROM head
    RETURNING seq, added_rev, scope),
scoped AS (
    INSERT INTO engine_scopes (item_seq, rev, scope) SELECT seq, added_rev, scope FROM item
    RETURNING rev)"""
"""PostgreSQL: the item (its values as :func:`item_values` gives them) and its scope row, at
the revision of a ``head`` named earlier in the same statement."""
WITH_VECTOR = """,
vectored AS (
    INSERT INTO engine_vectors (item_seq, soul, vec) SELECT seq, ?, ? FROM item)"""
"""PostgreSQL, after :data:`ITEM_AND_SCOPE`: the item's meaning vector row (its soul and
vector as :func:`vector_values` gives them)."""
SAME_WORDS = (
    "SELECT seq, id FROM engine_items WHERE soul = ? AND same_key = ? "
    "AND forgotten_rev IS NULL AND superseded_rev IS NULL AND scope = ? "
    "AND COALESCE(owner, '') = ?"
)
"""The current item of the same owner and scope with the same words (one indexed lookup)."""
ITEM_UNLESS_SAME = ITEM_AND_SCOPE.replace(
    "head.head FROM head", "head.head FROM head WHERE NOT EXISTS (SELECT 1 FROM same)"
)
"""PostgreSQL: :data:`ITEM_AND_SCOPE`, unless a CTE ``same`` named earlier found the words kept."""
ADD_ON_POSTGRES = (
    f"WITH head AS ({HEAD_MOVE}), {ITEM_AND_SCOPE}{WITH_VECTOR} SELECT rev FROM scoped"
)
ADD_BEFORE_VECTORS = (
    f"WITH head AS ({HEAD_MOVE}), "
    + ITEM_AND_SCOPE.replace(", same_key, added_rev)", ", added_rev)").replace(
        "?, head.head", "head.head"
    )
    + " SELECT rev FROM scoped"
)
"""PostgreSQL: an item kept as an engine before migrations 0004 and 0005 kept it (no vector, no
same-words key; the upgrade tests make such databases)."""


def word_column(text: str) -> str:
    """The words of ``text``, space-separated and space-framed, for whole-word lookups."""
    return " " + " ".join(sorted(words_of(text))) + " "


def memory_of(row: tuple[Any, ...]) -> Memory:
    seq, item_id, text, at, scope, owner, owner_name, conversation, message, tool_use, keep = row
    said_by = {"member": owner, "name": owner_name or owner} if owner else None
    source = {"conversation": conversation, "message": message, "tool_use": tool_use}
    return Memory(item_id, text, at, scope, said_by, source, seq, bool(keep))


def item_values(
    soul: str, *, text: str, scope: str, said_by: dict[str, str] | None, source: dict[str, Any]
) -> list[Any]:
    """A new item's values in :data:`INSERT_ITEM`'s order, all but the revision that adds it
    (:data:`ITEM_AND_SCOPE` takes them, then :func:`vector_values`).

    A bad scope is a ValueError; a private memory with no member to own it, :class:`NoOwner`.
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {list(SCOPES)}, not {scope!r}")
    if scope == "private" and said_by is None:
        raise NoOwner("A private memory needs the member who said it.")
    owner, name = (said_by["member"], said_by["name"]) if said_by else (None, None)
    return [
        f"m{uuid.uuid4().hex[:12]}",
        soul,
        text,
        word_column(text),
        now_iso(),
        scope,
        owner,
        name,
        source.get("conversation"),
        source.get("message"),
        source.get("tool_use"),
        same_words(text),
    ]


def vector_values(soul: str, text: str) -> list[Any]:
    """The soul and the meaning vector :data:`ITEM_AND_SCOPE` writes beside a new item."""
    return [soul, vector_bytes([text])[0]]


def same_memory(
    cursor: Cursor, soul: str, *, text: str, scope: str, owner: str | None
) -> tuple[int, str] | None:
    """``(seq, id)`` of the current item of ``owner`` (None: an unattended run) in ``scope``
    holding the same words as ``text`` (case, spacing and end punctuation aside), if any."""
    row = cursor.run(
        f"{SAME_WORDS} ORDER BY seq DESC LIMIT 1", [soul, same_words(text), scope, owner or ""]
    ).one()
    return (int(row[0]), str(row[1])) if row else None


def touch_memory(cursor: Cursor, soul: str, seq: int) -> int:
    """Make the item the most recent (said again now): the head moves, and from that revision on
    blocks take it as the newest memory; the new head number."""
    head = move_head(cursor, soul)
    cursor.run(
        "UPDATE engine_items SET at = ?, touched_rev = ? WHERE seq = ?", [now_iso(), head, seq]
    )
    return head


def keep_memory(cursor: Cursor, soul: str, new: NewMemory) -> tuple[int, str]:
    """Keep ``new``, unless its owner keeps the same words in the same scope already (then
    that one is made the most recent instead); ``(new head, the memory's id)``."""
    if new.scope in SCOPES:
        owner = new.said_by["member"] if new.said_by else None
        same = same_memory(cursor, soul, text=new.text, scope=new.scope, owner=owner)
        if same is not None:
            return touch_memory(cursor, soul, same[0]), same[1]
    head = add_memory(
        cursor, soul, text=new.text, scope=new.scope, said_by=new.said_by, source=new.source
    )
    row = cursor.run(
        "SELECT id FROM engine_items WHERE soul = ? AND added_rev = ? ORDER BY seq DESC LIMIT 1",
        [soul, head],
    ).one()
    assert row is not None
    return head, str(row[0])


def add_memory(
    cursor: Cursor,
    soul: str,
    *,
    text: str,
    scope: str,
    said_by: dict[str, str] | None,
    source: dict[str, Any],
    vector: bool = True,
) -> int:
    """Keep one memory, with its meaning vector, and move the head; the new head number.

    ``vector=False`` keeps it as an engine before migration 0004 did (no vector, no same-words
    key; the upgrade
    tests make such databases)."""
    values = item_values(soul, text=text, scope=scope, said_by=said_by, source=source)
    if cursor.postgres:
        # One round trip for the head, the item, its scope row and its vector: a turn event's
        # transaction is then three statements and its commit.
        if vector:
            row = cursor.run(ADD_ON_POSTGRES, [soul, *values, *vector_values(soul, text)]).one()
        else:
            row = cursor.run(ADD_BEFORE_VECTORS, [soul, *values[:-1]]).one()
        assert row is not None
        return int(row[0])
    head = move_head(cursor, soul)
    if vector:
        sql = f"{INSERT_ITEM} VALUES ({PLACES}) RETURNING seq"
    else:  # before 0005: no same-words key
        values = values[:-1]
        sql = INSERT_ITEM.replace(", same_key, added_rev)", ", added_rev)")
        sql += f" VALUES ({PLACES[3:]}) RETURNING seq"
    row = cursor.run(sql, [*values, head]).one()
    assert row is not None
    seq = int(row[0])
    cursor.run(
        "INSERT INTO engine_scopes (item_seq, rev, scope) VALUES (?, ?, ?)", [seq, head, scope]
    )
    cursor.run("INSERT INTO engine_items_fts (rowid, text) VALUES (?, ?)", [seq, text])
    if vector:
        cursor.run(INSERT_VECTOR, [seq, soul, vector_bytes([text])[0]])
    return head


def add_household_memories(cursor: Cursor, soul: str, texts: list[str]) -> int:
    """Keep many household memories from an unattended run at one new revision (an import, or
    a benchmark's seed), in a few statements however many there are; the new head number."""
    head = move_head(cursor, soul)
    at = now_iso()
    cursor.raw.executemany(
        cursor.placeholders(
            "INSERT INTO engine_items (id, soul, text, words, at, scope, same_key, added_rev) "
            "VALUES (?, ?, ?, ?, ?, 'household', ?, ?)"
        ),
        [
            (f"m{uuid.uuid4().hex[:12]}", soul, t, word_column(t), at, same_words(t), head)
            for t in texts
        ],
    )
    cursor.run(
        "INSERT INTO engine_scopes (item_seq, rev, scope) "
        "SELECT seq, added_rev, scope FROM engine_items WHERE soul = ? AND added_rev = ?",
        [soul, head],
    )
    if not cursor.postgres:
        cursor.run(
            "INSERT INTO engine_items_fts (rowid, text) "
            "SELECT seq, text FROM engine_items WHERE soul = ? AND added_rev = ?",
            [soul, head],
        )
    added = cursor.run(
        "SELECT seq FROM engine_items WHERE soul = ? AND added_rev = ? ORDER BY seq", [soul, head]
    ).all()
    cursor.raw.executemany(
        cursor.placeholders(INSERT_VECTOR),
        [(int(row[0]), soul, vec) for row, vec in zip(added, vector_bytes(texts), strict=True)],
    )
    return head


def live_memories(cursor: Cursor, soul: str) -> list[Memory]:
    """Every live item of the soul, oldest first (for inspection; no viewer applies)."""
    rows = cursor.run(
        f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND {LIVE} ORDER BY seq", [soul]
    ).all()
    return [memory_of(row) for row in rows]


def find_memory(cursor: Cursor, soul: str, item_id: str, *, viewer: str | None) -> Memory:
    """The kept item ``viewer`` may see, current or replaced; :class:`UnknownItem` otherwise."""
    row = cursor.run(
        f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND id = ? AND {KEPT} AND {VISIBLE}",
        [soul, item_id, viewer],
    ).one()
    if row is None:
        raise UnknownItem(item_id)
    return memory_of(row)


def live_among(what: str, key: str, count: int) -> str:
    """SQL for ``what`` of the live items of a soul, among ``count`` values of ``key``, that a
    viewer may see; its parameters are the soul, those values, then the viewer."""
    marks = ", ".join("?" * count)
    return (
        f"SELECT {what} FROM engine_items WHERE soul = ? AND {key} IN ({marks}) "  # noqa: S608
        f"AND {LIVE} AND {VISIBLE}"
    )


def all_visible(cursor: Cursor, soul: str, item_ids: list[str], *, viewer: str | None) -> bool:
    """Whether every one of ``item_ids`` is live and visible to ``viewer`` now."""
    wanted = sorted(set(item_ids))
    if not wanted:
        return True
    row = cursor.run(live_among("COUNT(*)", "id", len(wanted)), [soul, *wanted, viewer]).one()
    return row is not None and int(row[0]) == len(wanted)


def forget_memories(cursor: Cursor, soul: str, seqs: list[int]) -> int | None:
    """Forget these items for good (text deleted); the new head, or None when there were none."""
    if not seqs:
        return None
    head = move_head(cursor, soul)
    for seq in seqs:
        cursor.run(
            "UPDATE engine_items SET text = '', words = ' ', same_key = NULL, forgotten_rev = ? "
            "WHERE seq = ?",
            [head, seq],
        )
        cursor.run("DELETE FROM engine_vectors WHERE item_seq = ?", [seq])
        if not cursor.postgres:
            cursor.run("DELETE FROM engine_items_fts WHERE rowid = ?", [seq])
    return head


def rescope_memory(cursor: Cursor, soul: str, memory: Memory, scope: str) -> None:
    """Change one item's scope; the head moves when the scope changed."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {list(SCOPES)}, not {scope!r}")
    if scope == memory.scope:
        return
    if scope == "private" and memory.owner is None:
        raise NoOwner("An unattended run's memory has no member to keep it private for.")
    head = move_head(cursor, soul)
    cursor.run("UPDATE engine_items SET scope = ? WHERE seq = ?", [scope, memory.seq])
    cursor.run(
        "INSERT INTO engine_scopes (item_seq, rev, scope) VALUES (?, ?, ?)",
        [memory.seq, head, scope],
    )
    memory.scope = scope


def mark_kept(cursor: Cursor, soul: str, memory: Memory, keep: bool) -> None:
    """Mark one item *keep in every chat*, or unmark it; the head moves when the mark changed,
    and the mark's history says from which revision it holds."""
    if keep == memory.keep:
        return
    head = move_head(cursor, soul)
    cursor.run("UPDATE engine_items SET keep = ? WHERE seq = ?", [int(keep), memory.seq])
    cursor.run(
        "INSERT INTO engine_keeps (item_seq, rev, keep) VALUES (?, ?, ?)",
        [memory.seq, head, int(keep)],
    )
    memory.keep = keep


def member_items(cursor: Cursor, soul: str, member: str) -> list[tuple[int, str]]:
    """``(seq, id)`` of every kept item ``member`` said (current or replaced), oldest first."""
    rows = cursor.run(
        f"SELECT seq, id FROM engine_items WHERE soul = ? AND owner = ? AND {KEPT} ORDER BY seq",
        [soul, member],
    ).all()
    return [(int(seq), item_id) for seq, item_id in rows]


def page_of_items(
    cursor: Cursor,
    soul: str,
    *,
    viewer: str | None,
    words: set[str],
    before: int | None,
    limit: int,
    orphaned: bool = False,
) -> list[Memory]:
    """Up to ``limit`` items ``viewer`` may see holding every one of ``words``, newest first:
    current items, or with ``orphaned`` the replaced items :data:`ORPHANED` names."""
    which = ORPHANED if orphaned else LIVE
    sql = f"SELECT {COLUMNS} FROM engine_items WHERE soul = ? AND {which} AND {VISIBLE}"
    params: list[Any] = [soul, *([viewer] if orphaned else []), viewer]
    if before is not None:
        sql += " AND seq < ?"
        params.append(before)
    for word in sorted(words):
        sql += " AND instr(words, ?) > 0" if not cursor.postgres else " AND strpos(words, ?) > 0"
        params.append(f" {word} ")
    sql += " ORDER BY seq DESC LIMIT ?"
    params.append(limit)
    return [memory_of(row) for row in cursor.run(sql, params).all()]


def members_of(cursor: Cursor, soul: str) -> list[dict[str, Any]]:
    """Each member who said a live item: the latest name they went by, their private count."""
    rows = cursor.run(
        f"SELECT owner, owner_name, scope FROM engine_items WHERE soul = ? AND {LIVE} "
        "AND owner IS NOT NULL ORDER BY seq",
        [soul],
    ).all()
    counts: dict[str, dict[str, Any]] = {}
    for owner, name, scope in rows:
        entry = counts.setdefault(owner, {"member": owner, "name": "", "private_items": 0})
        entry["name"] = name or owner
        entry["private_items"] += int(scope == "private")
    return sorted(counts.values(), key=lambda m: (m["name"], m["member"]))


def was_forgotten(cursor: Cursor, soul: str, item_id: str, *, viewer: str | None) -> bool:
    """True when the item was forgotten and, as it was, ``viewer`` could see it."""
    row = cursor.run(
        f"SELECT 1 FROM engine_items WHERE soul = ? AND id = ? AND forgotten_rev IS NOT NULL "
        f"AND {VISIBLE}",
        [soul, item_id, viewer],
    ).one()
    return row is not None


def holds_memories(cursor: Cursor, soul: str) -> bool:
    """True when the soul keeps at least one live memory."""
    row = cursor.run(f"SELECT 1 FROM engine_items WHERE soul = ? AND {LIVE} LIMIT 1", [soul]).one()
    return row is not None
