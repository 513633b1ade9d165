"""Turn-event ids (each event acts once) and asks with their answers, as rows.

An ask is a row from the moment it is taken; its answer is written into the same row once, with
the ids of the memories it was made from (``answer_items``, JSON), so an answer read twice is the
same answer, and an acknowledged one is never sent again. An answer not yet acknowledged that was
built on a memory since forgotten, or made private to someone other than the asker, is taken back
(:func:`drop_answers_built_on`): its ask is answered afresh.
"""

import json
from collections.abc import Iterable
from typing import Any

from reference_engine.storage.database import Cursor

ASK_COLUMNS = (
    "id, soul, conversation, question, viewer, ready_at, answer_id, answer, answered_at, "
    "answer_items"
)
ASK_FIELDS = tuple(ASK_COLUMNS.split(", "))
"""What an open ask is read as: a dict of these fields, one for each column."""


def claim_event(cursor: Cursor, event_id: str, soul: str, received_at: str) -> bool:
    """Record an event id; False when it was recorded before (the event must not act again)."""
    cursor.run(
        "INSERT INTO engine_events (id, soul, received_at) VALUES (?, ?, ?) "
        "ON CONFLICT (id) DO NOTHING",
        [event_id, soul, received_at],
    )
    return cursor.count == 1


def event_ids(cursor: Cursor) -> list[str]:
    return [row[0] for row in cursor.run("SELECT id FROM engine_events ORDER BY received_at").all()]


def add_ask(cursor: Cursor, ask: dict[str, Any]) -> None:
    cursor.run(
        "INSERT INTO engine_asks (id, soul, conversation, question, viewer, asked_at, ready_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ask["id"],
            ask["soul"],
            ask["conversation"],
            ask["question"],
            ask["viewer"],
            ask["asked_at"],
            ask["ready_at"],
        ],
    )


def open_asks(cursor: Cursor, conversation: str) -> list[dict[str, Any]]:
    """The conversation's unacknowledged asks, oldest first."""
    sql = (
        f"SELECT {ASK_COLUMNS} FROM engine_asks WHERE conversation = ? AND acked = 0 "
        "ORDER BY asked_at, id"
    )
    return [ask_of(row) for row in cursor.run(sql, [conversation]).all()]


def ask_of(row: Any) -> dict[str, Any]:
    """An ask row as a dict of :data:`ASK_FIELDS`; ``answer_items`` a list of ids (empty when
    no answer is written)."""
    ask = dict(zip(ASK_FIELDS, row, strict=True))
    ask["answer_items"] = json.loads(ask["answer_items"]) if ask["answer_items"] else []
    return ask


def write_answer(
    cursor: Cursor, ask_id: str, answer_id: str, answer: str, at: str, items: list[str]
) -> bool:
    """Write an ask's answer and the ids of the memories it was made from, unless one is written
    already; True when this one was kept."""
    cursor.run(
        "UPDATE engine_asks SET answer_id = ?, answer = ?, answered_at = ?, answer_items = ? "
        "WHERE id = ? AND answer_id IS NULL",
        [answer_id, answer, at, json.dumps(sorted(set(items))), ask_id],
    )
    return cursor.count == 1


def drop_answers_built_on(
    cursor: Cursor, soul: str, item_ids: Iterable[str], *, spared_viewer: str | None = None
) -> int:
    """Take back every answer of ``soul`` not yet acknowledged that was made from any of
    ``item_ids`` (forgotten, or made private), except those asked by ``spared_viewer`` (the
    owner of an item made private still sees it): each ask is answered afresh, from what its
    viewer may see then. Returns how many were taken back."""
    doomed = set(item_ids)
    if not doomed:
        return 0
    rows = cursor.run(
        "SELECT id, viewer, answer_items FROM engine_asks "
        "WHERE soul = ? AND acked = 0 AND answer_id IS NOT NULL",
        [soul],
    ).all()
    dropped = 0
    for ask_id, viewer, items in rows:
        if spared_viewer is not None and viewer == spared_viewer:
            continue
        if doomed.intersection(json.loads(items) if items else []):
            cursor.run(
                "UPDATE engine_asks SET answer_id = NULL, answer = NULL, answered_at = NULL, "
                "answer_items = NULL WHERE id = ?",
                [ask_id],
            )
            dropped += 1
    return dropped


def due_asks(cursor: Cursor, now: float, *, limit: int) -> list[dict[str, Any]]:
    """Asks not yet answered whose time has come (``ready_at`` at most ``now``), oldest first,
    whatever their conversation: the ones a restarted engine left pending are among them."""
    sql = (
        f"SELECT {ASK_COLUMNS} FROM engine_asks WHERE answer_id IS NULL AND ready_at <= ? "
        "ORDER BY ready_at, id LIMIT ?"
    )
    return [ask_of(row) for row in cursor.run(sql, [now, limit]).all()]


def acknowledge(cursor: Cursor, conversation: str, answer_ids: list[str]) -> None:
    for answer_id in answer_ids:
        cursor.run(
            "UPDATE engine_asks SET acked = 1 WHERE conversation = ? AND answer_id = ?",
            [conversation, str(answer_id)],
        )


def clear_all(cursor: Cursor) -> None:
    """Every memory, event and ask gone; every soul's head moves one step (the empty state is a
    new revision), so no name ever comes back with other contents."""
    tables = ["engine_scopes", "engine_keeps", "engine_events", "engine_asks", "engine_items"]
    tables += ["engine_selections", "engine_curations", "engine_curation_checks"]
    for table in tables:
        cursor.run(f"DELETE FROM {table}")  # noqa: S608 - table names are this module's own
    if not cursor.postgres:
        cursor.run("DELETE FROM engine_items_fts")
    cursor.run("UPDATE engine_souls SET head = head + 1")
