"""The suite's PostgreSQL test database as the engine reaches it: its connection settings, its
URL, and a schema of a test's own inside it (the URL of the test database for a server or worker
process is :func:`tests.support.live_servers.database_url`)."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from django.db import connection


def postgres_settings() -> dict[str, Any] | None:
    """The site's test database settings when the suite runs on PostgreSQL, else ``None``."""
    if connection.vendor != "postgresql":
        return None
    return connection.settings_dict


def postgres_url(settings: dict[str, Any], schema: str = "") -> str:
    """A ``postgresql://`` URL of the database in ``settings``, with ``schema`` first on its
    search path when given."""
    user = quote(settings.get("USER") or "postgres")
    password = f":{quote(settings['PASSWORD'])}" if settings.get("PASSWORD") else ""
    host = settings.get("HOST") or "127.0.0.1"
    port = settings.get("PORT") or 5432
    url = f"postgresql://{user}{password}@{host}:{port}/{quote(settings['NAME'])}"
    return url + (f"?options=-csearch_path%3D{schema}" if schema else "")


@contextmanager
def engine_schema(settings: dict[str, Any]) -> Iterator[str]:
    """A new, empty schema (``engine_<random>``) in the PostgreSQL database in ``settings``
    until the block ends, then dropped; the URL that puts it first on the search path."""
    import psycopg

    schema = f"engine_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield postgres_url(settings, schema)
    finally:
        with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
