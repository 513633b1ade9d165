"""What the engine's migration files share: one statement list per dialect.

The migrations themselves are in ``migrations/`` (yoyo-migrations files, ``NNNN_name.py``, each
naming the one before it in ``__depends__``); :mod:`.schema` applies them.
"""

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any


def is_sqlite(connection: Any) -> bool:
    """True for a ``sqlite3`` connection, False for psycopg's (the only two the engine opens)."""
    return isinstance(connection, sqlite3.Connection)


def run_for_dialect(*, sqlite: Sequence[str], postgres: Sequence[str]) -> Callable[[Any], None]:
    """A migration step that runs ``sqlite``'s statements on SQLite and ``postgres``'s on
    PostgreSQL, in order, in the migration's transaction."""

    def apply(connection: Any) -> None:
        cursor = connection.cursor()
        try:
            for statement in sqlite if is_sqlite(connection) else postgres:
                cursor.execute(statement)
        finally:
            cursor.close()

    return apply
