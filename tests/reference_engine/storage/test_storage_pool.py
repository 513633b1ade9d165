"""On PostgreSQL the engine's connections come from psycopg_pool: never more than ``pool_size``
open at once, and each checked before it is lent, so one the server dropped is replaced rather
than handed to a request. (SQLite has no server to cap or to drop a connection.)"""

import pytest
from psycopg_pool import PoolTimeout

from reference_engine.storage import database as storage
from reference_engine.storage.database import Database


def postgres_only(url: str) -> None:
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("the pool's cap and check are PostgreSQL's; SQLite opens files")


def test_no_more_than_pool_size_connections_are_open_at_once(
    engine_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    postgres_only(engine_database)
    monkeypatch.setattr(storage, "POOL_WAIT", 0.5)
    database = Database(engine_database, pool_size=2)
    try:
        with database.connection() as one, database.connection() as two:
            assert one is not two
            with pytest.raises(PoolTimeout), database.connection():
                pass  # a third waits for one of the two, and gives up after POOL_WAIT
        with database.read() as cursor:  # given back: lent again
            assert cursor.run("SELECT 1").one() == (1,)
    finally:
        database.close()


def test_a_connection_the_server_dropped_is_replaced_not_lent(engine_database: str) -> None:
    postgres_only(engine_database)
    database = Database(engine_database, pool_size=1)
    try:
        with database.read() as cursor:
            first = cursor.run("SELECT pg_backend_pid()").one()[0]
        admin = Database(engine_database)
        with admin.read() as cursor:  # as a server restart or an idle timeout would
            cursor.run("SELECT pg_terminate_backend(?, 5000)", [first])  # waits till it is gone
        admin.close()

        with database.read() as cursor:
            second = cursor.run("SELECT pg_backend_pid()").one()[0]
    finally:
        database.close()

    assert second != first
