"""Stopping the engine never closes a database connection a request is still using: closing a
SQLite connection under another thread's statement can crash the whole process."""

import sqlite3
import threading

import pytest

from reference_engine.storage.database import Database, DatabaseClosed


def is_closed(database: Database, raw: object) -> bool:
    if database.postgres:
        return bool(raw.closed)  # type: ignore[attr-defined]
    try:
        raw.execute("SELECT 1")  # type: ignore[attr-defined]
    except sqlite3.ProgrammingError:
        return True
    return False


def test_a_connection_in_use_outlives_close_and_is_closed_when_given_back(
    engine_database: str,
) -> None:
    # two at most: on PostgreSQL the pool may otherwise still be adding a third it started while
    # the second was asked for, and lend that one to the request
    database = Database(engine_database, pool_size=2)
    with database.connection() as first, database.connection() as second:
        pass  # both idle now: the request takes one, the other stays idle
    borrowed_by_request = threading.Event()
    closed = threading.Event()
    seen: dict[str, object] = {}

    def request() -> None:
        with database.read() as cursor:
            seen["raw"] = cursor.raw.connection
            borrowed_by_request.set()
            closed.wait(timeout=10)
            seen["answer"] = cursor.run("SELECT 1").one()

    thread = threading.Thread(target=request)
    thread.start()
    assert borrowed_by_request.wait(timeout=10)
    idle = second if seen["raw"] is first else first
    database.close()
    assert seen["raw"] in (first, second)
    assert is_closed(database, idle)  # idle: closed at once
    closed.set()
    thread.join(timeout=10)

    assert seen["answer"] == (1,)
    assert is_closed(database, seen["raw"])  # closed once its request gave it back
    with pytest.raises(DatabaseClosed), database.read():
        pass
