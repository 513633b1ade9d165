"""The engine's own tests: each runs on a fresh SQLite file, and on a fresh PostgreSQL schema
when the suite runs on PostgreSQL (``DATABASE_URL``, as CI does).

The PostgreSQL schema lives in the test database pytest-django made for the site, under a name
of its own (``engine_<random>``), so the engine never meets the site's tables; it is dropped
after the test.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reference_engine.server import ReferenceEngine
from tests.support.databases import engine_schema, postgres_settings
from tests.support.engine_token import TOKEN


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
    with engine_schema(settings) as url:
        yield url


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
    with engine_schema(settings) as url:
        yield url


@pytest.fixture
def durable_engine(engine_database: str) -> Iterator[ReferenceEngine]:
    """The engine in this process on ``engine_database``, control door open."""
    running = ReferenceEngine(token=TOKEN, database=engine_database, control=True).start()
    yield running
    running.stop()


@pytest.fixture
def door_site(brain_door_gunicorn: tuple[str, Any]) -> str:
    """The URL of the site under the Procfile's gunicorn, its brain door open to calls signed
    with :data:`~tests.support.production_site.DOOR_SECRET`."""
    return brain_door_gunicorn[0]
