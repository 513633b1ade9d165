"""The engine's own tests: each runs on a fresh SQLite file, and on a fresh PostgreSQL schema
when the suite runs on PostgreSQL (``DATABASE_URL``, as CI does).

The PostgreSQL schema lives in the test database pytest-django made for the site, under a name
of its own (``engine_<random>``), so the engine never meets the site's tables; it is dropped
after the test.
"""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from reference_engine.server import ReferenceEngine

TOKEN = "engine-test-token"


def postgres_settings() -> dict[str, Any] | None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    return connection.settings_dict


def postgres_url(settings: dict[str, Any], schema: str = "") -> str:
    user = quote(settings.get("USER") or "postgres")
    password = f":{quote(settings['PASSWORD'])}" if settings.get("PASSWORD") else ""
    host = settings.get("HOST") or "127.0.0.1"
    port = settings.get("PORT") or 5432
    url = f"postgresql://{user}{password}@{host}:{port}/{quote(settings['NAME'])}"
    return url + (f"?options=-csearch_path%3D{schema}" if schema else "")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_database(
    request: pytest.FixtureRequest, tmp_path: Path, db: None, django_db_blocker: Any
) -> Iterator[str]:
    """A fresh, empty engine database URL: a SQLite file, or a PostgreSQL schema of its own.

    ``db`` is asked for so pytest-django makes the site's test database, which holds the schema.
    """
    if request.param == "sqlite":
        yield str(tmp_path / "engine.sqlite3")
        return
    with django_db_blocker.unblock():
        settings = postgres_settings()
    if settings is None:
        pytest.skip("the suite runs on SQLite; CI runs these on PostgreSQL")
    import psycopg

    schema = f"engine_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield postgres_url(settings, schema)
    finally:
        with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def another_engine_database(
    engine_database: str, tmp_path: Path, django_db_blocker: Any
) -> Iterator[str]:
    """A second fresh, empty engine database of the same kind as ``engine_database`` (a new
    household computer's engine, say)."""
    if not engine_database.startswith("postgresql://"):
        yield str(tmp_path / "another-engine.sqlite3")
        return
    with django_db_blocker.unblock():
        settings = postgres_settings()
    assert settings is not None
    import psycopg

    schema = f"engine_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield postgres_url(settings, schema)
    finally:
        with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def durable_engine(engine_database: str) -> Iterator[ReferenceEngine]:
    """The engine in this process on ``engine_database``, control door open."""
    running = ReferenceEngine(token=TOKEN, database=engine_database, control=True).start()
    yield running
    running.stop()
