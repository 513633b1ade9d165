"""Shared by the migration tests: a database the engine wrote before migrations (kept in
``fixtures/``, made by ``fixtures/make_pre_migration.py`` from commit bf19998), loaded into a
test's fresh engine database, and what that old engine said it held."""

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from yoyo import read_migrations
from yoyo.migrations import MigrationList

from reference_engine.storage import memories as rows
from reference_engine.storage.database import Cursor, Database, sqlite_path
from reference_engine.storage.schema import MIGRATIONS, migrations_backend

FIXTURES = Path(__file__).resolve().parents[1] / "reference_engine" / "storage" / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
OLD_SCHEMA = "engine_pre_migration"


def dialect_of(url: str) -> str:
    return "sqlite" if sqlite_path(url) is not None else "postgres"


def schema_of(url: str) -> str:
    """The PostgreSQL schema a test's engine URL puts first on its search path."""
    return unquote(url).rsplit("search_path=", 1)[1]


def load_pre_migration_database(url: str) -> dict[str, Any]:
    """Put the old engine's database at ``url`` (a fresh test database); what it held."""
    dialect = dialect_of(url)
    if dialect == "sqlite":
        shutil.copyfile(FIXTURES / "pre_migration.sqlite3", url)
    else:
        import psycopg

        schema = schema_of(url)
        script = (FIXTURES / "pre_migration.postgres.sql").read_text(encoding="utf-8")
        script = script.replace(f"CREATE SCHEMA {OLD_SCHEMA};", "")
        script = script.replace(f"{OLD_SCHEMA}.", f'"{schema}".')
        with psycopg.connect(url.split("?", 1)[0], autocommit=True) as admin:
            admin.execute(script.encode("utf-8"))
    return json.loads((FIXTURES / f"pre_migration.{dialect}.json").read_text(encoding="utf-8"))


def engine_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m reference_engine ARGS``, as a household would run it; its output."""
    return subprocess.run(
        [sys.executable, "-m", "reference_engine", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def database_at_0003(url: str, texts: list[str], *, notes: int) -> None:
    """The engine database as the engine before meaning left it: migrations up to 0003, and
    ``texts`` then ``notes`` notes about the shed kept with no vector."""
    database = Database(url)
    with migrations_backend(database) as yoyo:
        every = read_migrations(str(MIGRATIONS))
        older = MigrationList([m for m in every if m.id != "0004_recall_meaning"])
        yoyo.apply_migrations(yoyo.to_apply(older))
    with database.write() as cursor:
        for text in [*texts, *(f"Old note {n} about the shed" for n in range(notes))]:
            rows.add_memory(
                cursor, "pippa", text=text, scope="household", said_by=None, source={},
                vector=False,
            )  # fmt: skip
    database.close()


@contextmanager
def reading(url: str) -> Iterator[Cursor]:
    """A read cursor on the engine database at ``url``, its connection closed after."""
    database = Database(url)
    try:
        with database.read() as cursor:
            yield cursor
    finally:
        database.close()
