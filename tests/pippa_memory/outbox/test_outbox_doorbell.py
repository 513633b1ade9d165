"""The outbox doorbell: a commit wakes the delivery worker at once, through PostgreSQL's
LISTEN/NOTIFY (so workers on other hosts hear it) or, on SQLite, a socket named after the
database (so two sites on one machine never share a bell)."""

import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from pippa_memory.outbox import doorbell
from reference_engine.server import ReferenceEngine
from tests.support.outbox_workers import start_worker, stop, wait_until_listening, worker_env
from webui.models import Conversation, Message
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


def assistant_row(conversation: Conversation) -> Message:
    return Message.objects.create(
        conversation=conversation, role="assistant", content="noted", vessel=conversation.vessel
    )


@pytest.fixture
def listener(configure: Any) -> Iterator[doorbell.Listener]:
    """Where a worker would hear rings, with rings on."""
    configure(OUTBOX_WAKE_ADDRESS="auto")
    bell = doorbell.open_doorbell()
    assert bell is not None
    yield bell
    bell.close()


def test_a_commit_rings_the_worker_after_it_and_only_then(
    conversation: Conversation, listener: doorbell.Listener
) -> None:
    with transaction.atomic():
        assistant_row(conversation)
        assert not listener.hear(0.3)  # nothing before the commit
    assert listener.hear(5)


def test_on_postgresql_the_bell_is_notify_and_on_sqlite_a_socket_of_the_databases_own(
    configure: Any,
) -> None:
    configure(OUTBOX_WAKE_ADDRESS="auto")
    if connection.vendor == "postgresql":
        assert doorbell.notifies()
        assert doorbell.describe() == f"PostgreSQL NOTIFY {doorbell.CHANNEL}"
        return
    family, path = doorbell.datagram_address()
    assert family == socket.AF_UNIX
    assert path.endswith(".sock")
    # Another site (another database file) on the same machine has a bell of its own.
    other = {**connection.settings_dict, "NAME": "/elsewhere/another-site.sqlite3"}
    original = connection.settings_dict
    connection.settings_dict = other
    try:
        assert doorbell.datagram_address()[1] != path
    finally:
        connection.settings_dict = original


def test_no_rings_when_the_address_is_empty(conversation: Conversation, configure: Any) -> None:
    configure(OUTBOX_WAKE_ADDRESS="")

    assert doorbell.open_doorbell() is None


def test_a_socket_a_killed_worker_left_behind_is_taken_over(configure: Any) -> None:
    configure(OUTBOX_WAKE_ADDRESS="auto")
    family, path = doorbell.datagram_address()  # SQLite's bell (on PostgreSQL, what it would be)
    dead = socket.socket(family, socket.SOCK_DGRAM)
    dead.bind(path)
    dead.close()  # the file stays, as a SIGKILL leaves it
    assert os.path.exists(path)

    listener = doorbell.DatagramListener(doorbell.bind_datagram(family, path))
    try:
        sender = socket.socket(family, socket.SOCK_DGRAM)
        sender.sendto(doorbell.RING, path)
        sender.close()
        assert listener.hear(5)
    finally:
        listener.close()
    assert not os.path.exists(path)  # a worker that stops cleanly leaves no file


def test_a_turn_committed_on_one_connection_wakes_a_worker_on_another_at_once(
    memory_on: ReferenceEngine, conversation: Conversation, configure: Any
) -> None:
    # A poll far longer than the test: only the ring can wake the worker in time.
    configure(OUTBOX_WAKE_ADDRESS="auto", OUTBOX_POLL_INTERVAL=300.0)
    worker = start_worker(
        memory_on,
        env=worker_env(memory_on, OUTBOX_WAKE_ADDRESS="auto", OUTBOX_POLL_INTERVAL="300"),
    )
    try:
        wait_until_listening(worker)
        run_turn(conversation=conversation, text="remember the bins go out on Tuesday")
        committed = time.monotonic()
        while time.monotonic() - committed < 10:
            if any(r["path"] == "/v1/events" for r in memory_on.received):
                break
            time.sleep(0.05)
        took = time.monotonic() - committed
    finally:
        stop(worker)

    assert any(r["path"] == "/v1/events" for r in memory_on.received)
    assert took < 5  # well inside the 300 s poll: the ring woke it


def test_a_turns_event_rings_with_no_statement_of_its_own_on_postgresql_and_on_commit_on_sqlite(
    conversation: Conversation, listener: doorbell.Listener
) -> None:
    # PostgreSQL: the outbox table's trigger notifies at commit, so the turn sends no pg_notify;
    # SQLite: the commit sends a datagram (no statement either way).
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        assistant_row(conversation)
    assert listener.hear(5)
    with transaction.atomic():
        assistant_row(conversation)
        transaction.set_rollback(True)
    assert not listener.hear(0.5)  # a rolled-back event never rings
    assert not [q for q in queries.captured_queries if "notify" in q["sql"].lower()]
