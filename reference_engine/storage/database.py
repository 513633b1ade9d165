"""The engine's own database: a SQLite file (WAL) or a PostgreSQL database, reached directly.

No ORM: the engine must be liftable out of this project, and must never touch the site's tables.
SQL is written once with ``?`` placeholders; :class:`Database` turns them into ``%s`` for
PostgreSQL. Connections are pooled (a request thread borrows one and gives it back): on
PostgreSQL by ``psycopg_pool``, capped at ``pool_size`` connections and each checked before it is
lent (a connection the server dropped is replaced, never handed to a request; :func:`check_quiet`
makes that check without a round trip to the server); on SQLite by a
queue of this module's own (opening a file is cheap, and SQLite has no server to cap). Every write
runs in :meth:`Database.write`, committed before the caller answers anyone.
"""

import queue
import select
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from reference_engine.config import DEFAULTS

DEFAULT_FILE = "engine.sqlite3"
#: Seconds a request waits for a PostgreSQL connection when all ``pool_size`` are lent.
POOL_WAIT = 30.0


def check_quiet(connection: Any) -> None:
    """psycopg_pool's check of a connection about to be lent, with no round trip when none is
    needed: a server that drops an idle connection (a restart, an idle timeout,
    ``pg_terminate_backend``) says goodbye on its socket, or ends it, so only a connection that
    is closed or has something waiting to be read is asked (psycopg_pool's own
    ``check_connection``, which raises, and the pool replaces it, when the server is gone).
    The old check asked every time: two round trips of the dozen a new block takes."""
    from psycopg_pool import ConnectionPool

    if connection.closed:
        ConnectionPool.check_connection(connection)
        return
    waiting = select.poll()
    waiting.register(connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    if waiting.poll(0):
        ConnectionPool.check_connection(connection)


class DatabaseClosed(RuntimeError):
    """A connection was asked for after :meth:`Database.close`."""


class Cursor:
    """One transaction's cursor: ``run`` a statement, read ``one``/``all`` of its rows."""

    def __init__(self, raw: Any, *, postgres: bool) -> None:
        self.raw = raw
        self.postgres = postgres

    def placeholders(self, sql: str) -> str:
        """``sql`` with its ``?`` placeholders as this database's driver spells them."""
        return sql.replace("?", "%s") if self.postgres else sql

    def run(self, sql: str, params: Sequence[Any] = ()) -> "Cursor":
        self.raw.execute(self.placeholders(sql), tuple(params))
        return self

    def one(self) -> tuple[Any, ...] | None:
        return self.raw.fetchone()

    def all(self) -> list[tuple[Any, ...]]:
        return list(self.raw.fetchall())

    @property
    def count(self) -> int:
        return self.raw.rowcount


def sqlite_path(url: str) -> str | None:
    """The file of a SQLite URL (``sqlite:///path``) or a bare path; None for PostgreSQL."""
    if url.startswith(("postgres://", "postgresql://")):
        return None
    if url.startswith("sqlite:"):
        return unquote(urlsplit(url).path) or DEFAULT_FILE
    return url


class Database:
    """A pool of connections to one engine database, SQLite or PostgreSQL; on PostgreSQL at
    most ``pool_size`` connections are open at once."""

    def __init__(self, url: str, *, pool_size: int = DEFAULTS.pool_size) -> None:
        self.url = url
        self.path = sqlite_path(url)
        self.postgres = self.path is None
        self.pool_size = pool_size
        self.pool: queue.LifoQueue[Any] = queue.LifoQueue()
        self.server_pool: Any = None  # psycopg_pool's, opened at the first borrow
        self.lock = threading.Lock()
        self.closed = False

    def connect(self) -> Any:
        """A new connection of the engine's own settings, outside the pool (the migrations'
        lock and yoyo hold one each for a moment at start)."""
        if self.postgres:
            import psycopg

            return psycopg.connect(self.url, autocommit=True)
        assert self.path is not None
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        raw.execute("PRAGMA journal_mode=WAL")
        # WAL with NORMAL survives a killed process (only a power cut may lose the last commit).
        raw.execute("PRAGMA synchronous=NORMAL")
        raw.execute("PRAGMA busy_timeout=30000")
        # Recall reads rows scattered over the file: read it through a memory map (up to
        # 256 MiB, shared by every connection through the OS) rather than copying each page
        # into a cache of this connection's own.
        raw.execute("PRAGMA mmap_size=268435456")
        return raw

    def opened_server_pool(self) -> Any:
        """psycopg_pool's pool, opened on first use (so none is opened before gunicorn forks)."""
        from psycopg_pool import ConnectionPool

        with self.lock:
            if self.closed:
                raise DatabaseClosed("the engine's database is closed: the engine is stopping")
            if self.server_pool is None:
                self.server_pool = ConnectionPool(
                    self.url,
                    kwargs={"autocommit": True},
                    min_size=1,
                    max_size=self.pool_size,
                    timeout=POOL_WAIT,
                    check=check_quiet,
                    name="pippa-engine",
                    open=True,
                )
            return self.server_pool

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection borrowed from the pool, given back when the block ends; once the
        database is closed, closed instead (:meth:`close`), and none is lent any more."""
        if self.postgres:
            with self.server_connection() as raw:
                yield raw
            return
        try:
            raw = self.pool.get_nowait()
        except queue.Empty:
            raw = None
        if raw is None:
            with self.lock:
                closed = self.closed
            if closed:
                raise DatabaseClosed("the engine's database is closed: the engine is stopping")
            raw = self.connect()  # closed when given back if close() came meanwhile
        try:
            yield raw
        finally:
            with self.lock:
                closed = self.closed
                if not closed:
                    self.pool.put(raw)
            if closed:
                with suppress(Exception):  # closing is best effort at shutdown
                    raw.close()

    @contextmanager
    def server_connection(self) -> Iterator[Any]:
        """PostgreSQL: a connection from psycopg_pool (waiting up to ``POOL_WAIT`` seconds when
        all ``pool_size`` are lent); its check (:func:`check_quiet`) replaces one the server dropped
        meanwhile."""
        from psycopg_pool import PoolClosed

        server_pool = self.opened_server_pool()
        try:
            raw = server_pool.getconn()
        except PoolClosed as closed:
            raise DatabaseClosed(
                "the engine's database is closed: the engine is stopping"
            ) from closed
        try:
            yield raw
        finally:
            server_pool.putconn(raw)  # closed instead when the pool was closed meanwhile

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Cursor]:
        """One transaction, committed when the block ends and rolled back when it raises.

        A SQLite write takes the write lock at once (``BEGIN IMMEDIATE``) so two writers never
        deadlock upgrading a read; PostgreSQL writers queue on the rows they update.
        """
        if self.postgres and not write:
            # READ COMMITTED gives each statement its own snapshot, so a read transaction
            # would only add two round trips: reads run in autocommit.
            with self.statement() as cursor:
                yield cursor
            return
        with self.connection() as raw:
            cursor = raw.cursor()
            if self.postgres:
                cursor.execute("BEGIN")
            else:
                cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield Cursor(cursor, postgres=self.postgres)
            except BaseException:
                raw.rollback() if self.postgres else cursor.execute("ROLLBACK")
                raise
            else:
                cursor.execute("COMMIT")
            finally:
                cursor.close()

    @contextmanager
    def statement(self) -> Iterator[Cursor]:
        """For statements each of which is a transaction of its own: on PostgreSQL they run in
        autocommit, so each is committed (durably) before the database answers it, in one round
        trip; SQLite runs them in one write transaction, committed when the block ends."""
        if not self.postgres:
            with self.write() as cursor:
                yield cursor
            return
        with self.connection() as raw:
            cursor = raw.cursor()
            try:
                yield Cursor(cursor, postgres=True)
            finally:
                cursor.close()

    def write(self) -> Any:
        return self.transaction(write=True)

    def read(self) -> Any:
        return self.transaction(write=False)

    def close(self) -> None:
        """Close the idle connections now and each borrowed one when its block ends: a request
        still running (the engine is stopping under it) keeps its connection to the end, since
        closing a SQLite connection another thread is using can crash the process."""
        idle = []
        with self.lock:
            self.closed = True
            server_pool, self.server_pool = self.server_pool, None
            with suppress(queue.Empty):
                while True:
                    idle.append(self.pool.get_nowait())
        if server_pool is not None:
            server_pool.close()  # the same promise: idle closed now, lent ones when given back
        for raw in idle:
            with suppress(Exception):  # closing is best effort at shutdown
                raw.close()
