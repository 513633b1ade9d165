"""For the tests that run ``make run`` itself: a household's own checkout, a PostgreSQL database
of its own, and ``make run`` in it until the test is done."""

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import requests
from django.db import connection

from tests.support.live_servers import ROOT, server_environment

#: What a household's checkout holds to run (tests, docs and benches left out).
SHIPPED = (
    "Makefile",
    "Procfile",
    "manage.py",
    "requirements.txt",
    "requirements-run.txt",
    "requirements-dev.txt",
    "pippa_site",
    "webui",
    "pippa_memory",
    "reference_engine",
    "templates",
    "static",
    "demo",
    "docs",
)


def checkout_copy(folder: Path, *also: str) -> Path:
    """A household's own checkout: the shipped files (and the files named ``also``), and this
    test's virtualenv."""
    folder.mkdir()
    for name in (*SHIPPED, *also):
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


def make_run_command(port: int, engine_port: int) -> list[str]:
    """``make run PORT=… ENGINE_PORT=…``, told not to reinstall requirements (the virtualenv is
    the one running the test)."""
    return [
        "make",
        "-o",
        ".venv/.run-installed",
        "run",
        f"PORT={port}",
        f"ENGINE_PORT={engine_port}",
    ]


def make_run_environment(
    port: int, engine_port: int, database: str | None, **more: str
) -> dict[str, str]:
    """The environment ``make run`` is started with: this process's, without the project's own
    variables, any database URL or an outer ``make``'s flags; ``DATABASE_URL`` is ``database``
    when given (else the checkout's own ``db.sqlite3``), and ``more`` is added."""
    env = server_environment(PORT=str(port), ENGINE_PORT=str(engine_port), **more)
    for name in ("DATABASE_URL", "PIPPA_ENGINE_DATABASE_URL", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
        env.pop(name, None)
    if database:
        env["DATABASE_URL"] = database
    return env


@contextmanager
def make_run(
    folder: Path,
    *,
    port: int,
    engine_port: int,
    database: str | None,
    log: Path,
    umask: int | None = None,
) -> Iterator["subprocess.Popen[bytes]"]:
    """``make run PORT=… ENGINE_PORT=…`` in the household's ``folder`` (its database
    ``database``, else its own ``db.sqlite3``; under ``umask`` when given) until the block ends,
    then stopped as Ctrl-C stops it, every process of it gone. Its output is appended to
    ``log``."""
    env = make_run_environment(port, engine_port, database)
    with log.open("a") as output:
        process = subprocess.Popen(
            make_run_command(port, engine_port),
            cwd=folder,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=None if umask is None else lambda: os.umask(umask),
        )
        try:
            yield process
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=60)
                deadline = time.monotonic() + 60
                while group_alive(process.pid) and time.monotonic() < deadline:
                    time.sleep(0.2)  # supervisord stops its processes after make has gone
            except subprocess.TimeoutExpired:
                pass
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until_serving(
    url: str,
    *,
    seconds: float,
    log: Path,
    path: str = "/health/",
    headers: dict[str, str] | None = None,
) -> None:
    """Until ``url``'s ``path`` answers 200 (asked with ``headers``); fails with the end of
    ``log`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if requests.get(f"{url}{path}", headers=headers, timeout=3).status_code == 200:
                return
        except requests.RequestException:
            pass
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.5)


@contextmanager
def household_database(name: str) -> Iterator[str | None]:
    """On the PostgreSQL leg a database of the household's own (``name``), dropped afterwards;
    on SQLite ``None``: the household uses its checkout's ``db.sqlite3``, as ``make run`` does."""
    if connection.vendor != "postgresql":
        yield None
        return
    with own_postgres_database(f"{name}_{os.getpid()}") as url:
        yield url
