"""A household's own checkout for the tests that run ``make run`` itself, and a PostgreSQL
database of its own for it."""

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from tests.live_servers import ROOT

#: What a household's checkout holds to run (tests, docs and benches left out).
SHIPPED = (
    "Makefile",
    "Procfile",
    "manage.py",
    "requirements.txt",
    "requirements-run.txt",
    "requirements-dev.txt",
    "webui",
    "pippa_memory",
    "reference_engine",
    "templates",
    "static",
    "demo",
)


def checkout_copy(folder: Path) -> Path:
    """A household's own checkout: the shipped files, and this test's virtualenv."""
    folder.mkdir()
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    (folder / ".venv").symlink_to(sys.prefix)  # the virtualenv running this test
    return folder


@contextmanager
def own_postgres_database(name: str) -> Iterator[str]:
    """A PostgreSQL database of its own on the suite's server, dropped afterwards; its URL."""
    given = connection.settings_dict
    server = f"postgres://{given['USER']}@{given['HOST'] or '127.0.0.1'}:{given['PORT'] or 5432}"
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
