"""The engine database's schema: versioned migrations (yoyo-migrations) in ``migrations/``.

:func:`migrate` applies those not yet applied, at every start and by ``python -m reference_engine
migrate``, under one lock per database (a PostgreSQL advisory lock, which dies with its session; on
SQLite an exclusive lock on a file beside the database, which dies with its process), so two engines
starting at once never race the DDL and a killed start leaves nothing held. yoyo records each
applied migration in the engine's own database (``_yoyo_migration``), so a household's database
upgrades in place; the first migration adopts a database an engine made before migrations existed.
New tables and columns come as new files, never by editing an applied one.
"""

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from yoyo import read_migrations
from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
from yoyo.backends.core.sqlite3 import SQLiteBackend
from yoyo.connections import parse_uri

from reference_engine.storage.database import Database

MIGRATIONS = Path(__file__).with_name("migrations")
MIGRATION_TABLE = "_yoyo_migration"
ADVISORY_LOCK = 772531  # the key engines before migrations took for their DDL too


def backend(database: Database) -> Any:
    """A yoyo backend on a connection of ``database``'s own making (its pragmas, its URL)."""
    base = PostgresqlPsycopgBackend if database.postgres else SQLiteBackend

    class EngineBackend(base):  # type: ignore[misc, valid-type] - yoyo ships no types
        def connect(self, dburi: Any) -> Any:
            return database.connect()

        def apply_one(self, migration: Any, force: bool = False, mark: bool = True) -> None:
            """The migration's steps and the row that records it, in ONE transaction on one
            connection: a process killed at any point leaves it wholly applied or not at all.
            (yoyo's own commits the steps on a second connection, then records them, so a kill
            between the two would run a non-repeatable step again at the next start.)"""
            self.ensure_internal_schema_updated()
            with self.transaction():
                migration.process_steps(self, "apply", force=force)  # a savepoint in it
                if mark:
                    self.mark_one(migration, log=False)
                self.log_migration(migration, "apply")

    uri = "postgresql+psycopg://engine/engine" if database.postgres else "sqlite:///engine"
    return EngineBackend(parse_uri(uri), MIGRATION_TABLE)


@contextmanager
def migration_lock(database: Database) -> Iterator[None]:
    """Held while migrations are applied; released when the holder ends, however it ends."""
    if database.postgres:
        raw = database.connect()
        try:
            raw.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK])
            yield
        finally:
            raw.close()  # ends the session, and with it the lock
        return
    if database.path in (None, ":memory:"):
        yield
        return
    path = Path(f"{database.path}.migrate-lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


@contextmanager
def migrations_backend(database: Database) -> Iterator[Any]:
    """yoyo on ``database``, its own tables made, under :func:`migration_lock`."""
    with migration_lock(database):
        yoyo = backend(database)
        try:
            # Only one holder of migration_lock runs at a time, so a lock row yoyo finds here was
            # left by a killed process: yoyo's own lock would wait for it for ever.
            yoyo.init_database()
            yoyo.break_lock()
            yield yoyo
        finally:
            yoyo.connection.close()


def pending(database: Database) -> list[str]:
    """The ids of the migrations ``database`` has not applied yet, in the order they apply."""
    with migrations_backend(database) as yoyo:
        return [migration.id for migration in yoyo.to_apply(read_migrations(str(MIGRATIONS)))]


def migrate(database: Database) -> list[str]:
    """Apply every migration ``database`` lacks; returns the ids applied (none: up to date)."""
    with migrations_backend(database) as yoyo:
        todo = yoyo.to_apply(read_migrations(str(MIGRATIONS)))
        yoyo.apply_migrations(todo)
        return [migration.id for migration in todo]
