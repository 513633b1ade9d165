"""Two households' ``make run`` on one machine serve side by side.

Each household is its own checkout (a copy of this one's shipped files, sharing its virtualenv),
started with ``make run PORT=… ENGINE_PORT=…`` itself: ``migrate``, ``load_demo`` and supervisord with
the Procfile's four processes (gunicorn, the scheduler, the outbox worker, the reference engine),
under the environment the Makefile sets. On SQLite each uses its checkout's ``db.sqlite3`` and
``engine.sqlite3``, as ``make run`` does; on PostgreSQL each gets a database of its own through
``DATABASE_URL``. ``make`` is told not to reinstall requirements (``-o .venv/.run-installed``):
the virtualenv is the one running the test.

Both sites answer, a member logs in on each and sends a message to the offline vessel, and each
site's outbox delivers its turn event to its own engine and to no other; nothing in either
site's output says a port, socket or path was taken, and no address, socket or path one site's
processes say they hold (web, engine, doorbell, gunicorn's control socket) is the other's too.
"""

import os
import re
import sqlite3
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.db import connection

from tests.support.households import (
    checkout_copy,
    make_run,
    own_postgres_database,
    wait_until_serving,
)
from tests.support.live_servers import free_port

# Heavy: one worker runs it, once per database, one at a time with the production-server tests
# (two households' processes beside the load test would share PostgreSQL's hundred connections).
pytestmark = pytest.mark.xdist_group("production_server")

#: Words in a site's output that mean two sites clashed over something one of them holds.
CLASH_WORDS = ("Address already in use", "cannot hear rings", "Traceback", "Connection in use")
#: What each site's processes say they hold: gunicorn's address and any control socket, the
#: engine's address, and where the outbox worker hears its doorbell.
HELD = re.compile(r"(?:[Ll]istening at:?|woken by|memory engine on) (\S+?)(?:,|\s)")
START_SECONDS = 90
DELIVERY_SECONDS = 30


@dataclass
class Site:
    folder: Path
    port: int
    engine_port: int
    database_url: str | None
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def wait_until_answering(sites: list[Site]) -> None:
    """Until every site's login page answers, within :data:`START_SECONDS` for them all."""
    deadline = time.monotonic() + START_SECONDS
    for site in sites:
        left = max(deadline - time.monotonic(), 0.0)
        wait_until_serving(site.url, seconds=left, log=site.log, path="/accounts/login/")


def send_a_message(site: Site, text: str) -> str:
    """Log in as the demo member, start a chat with the offline vessel, send ``text``; the
    conversation's id."""
    session = requests.Session()
    session.get(f"{site.url}/accounts/login/", timeout=10)
    password = (site.folder / ".demo-login").read_text().strip()
    form = {"username": "demo", "password": password}
    form["csrfmiddlewaretoken"] = session.cookies["csrftoken"]
    answer = session.post(f"{site.url}/accounts/login/", data=form, timeout=10)
    assert answer.url.rstrip("/") == site.url, "the login did not take"
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    started = session.post(
        f"{site.url}/api/conversations/", json={"soul": "pippa", "vessel": "offline"}, timeout=10
    )
    assert started.status_code == 201, started.text
    conversation = started.json()["id"]
    sent = session.post(
        f"{site.url}/api/conversations/{conversation}/messages/", json={"text": text}, timeout=30
    )
    assert sent.status_code == 201, sent.text
    return conversation


def outbox_events(site: Site, conversation: str) -> dict[str, str]:
    """The site's outbox events of ``conversation``, id to status, read from its database."""
    query = "SELECT id, status FROM pippa_memory_outboxevent WHERE conversation_id = %s"
    if site.database_url:
        import psycopg

        with psycopg.connect(site.database_url) as database:
            rows = database.execute(query, [conversation]).fetchall()
    else:
        with sqlite3.connect(site.folder / "db.sqlite3") as database:
            rows = database.execute(query.replace("%s", "?"), [uuid.UUID(conversation).hex])
            rows = rows.fetchall()
    return {str(uuid.UUID(str(event))): status for event, status in rows}


def engine_events(site: Site) -> set[str]:
    """The turn events the site's own engine received (its ``engine.sqlite3``): none while the
    engine has not yet made its database or its tables. Opened read-only, so reading never makes
    the file the engine is about to create."""
    path = site.folder / "engine.sqlite3"
    if not path.exists():
        return set()
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as database:
        try:
            rows = database.execute("SELECT id FROM engine_events").fetchall()
        except sqlite3.OperationalError as error:
            if "no such table" not in str(error):
                raise
            return set()
    return {str(uuid.UUID(row[0])) for row in rows}


def test_two_households_make_run_side_by_side(tmp_path: Path) -> None:
    on_postgres = connection.vendor == "postgresql"
    sites = []
    with ExitStack() as stack:
        for name in ("first", "second"):
            database = None
            if on_postgres:
                own = f"two_sites_{name}_{os.getpid()}"
                database = stack.enter_context(own_postgres_database(own))
            folder = checkout_copy(tmp_path / name)
            site = Site(folder, free_port(), free_port(), database, tmp_path / f"{name}.log")
            ports = {"port": site.port, "engine_port": site.engine_port}
            stack.enter_context(make_run(folder, **ports, database=database, log=site.log))
            sites.append(site)

        wait_until_answering(sites)
        conversations = [
            send_a_message(site, f"Hello from the {n} site.")
            for site, n in zip(sites, ("first", "second"), strict=True)
        ]

        deadline = time.monotonic() + DELIVERY_SECONDS
        while True:
            events = [outbox_events(s, c) for s, c in zip(sites, conversations, strict=True)]
            received = [engine_events(site) for site in sites]
            delivered = all(
                events[i] and set(events[i].values()) == {"delivered"} for i in range(2)
            )
            if delivered or time.monotonic() > deadline:
                break
            time.sleep(0.5)

        for index, site in enumerate(sites):
            other = sites[1 - index]
            assert events[index], f"no turn event was written on {site.url}"
            assert set(events[index].values()) == {"delivered"}, site.log.read_text()[-3000:]
            assert set(events[index]) <= received[index], "not delivered to its own engine"
            assert not set(events[index]) & received[1 - index], f"delivered to {other.url}"
    outputs = [site.log.read_text() for site in sites]
    for output in outputs:
        for words in CLASH_WORDS:
            assert words not in output, output[-3000:]
    held = [set(HELD.findall(output)) for output in outputs]
    for index, addresses in enumerate(held):
        # Its web server, its engine, its doorbell (a socket, or its database's channel).
        assert len(addresses) >= 3, (addresses, outputs[index][-3000:])
    shared = held[0] & held[1] - {"PostgreSQL"}  # NOTIFY: a channel in each site's own database
    assert not shared, f"the two sites hold the same {shared}"
