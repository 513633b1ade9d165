"""The engine keeps what it acknowledged: across a SIGKILL, a restart, and in revision names; a
meaning backfill killed half-way finishes at the next start, every vector written once and whole."""

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from reference_engine.embedding import vector_bytes
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, call, recall, send, turn_event
from tests.support.engine_migrating import database_at_0003, reading
from tests.support.engine_processes import engine_process, kill, start_engine
from tests.support.engine_token import TOKEN
from tests.support.live_servers import free_port


def ingest_until_stopped(url: str, stop: threading.Event, log: dict[str, Any]) -> None:
    """Post numbered events until the engine dies; note which were acknowledged, and the one in
    flight when it died (sent, never answered)."""
    number = 0
    while not stop.is_set():
        event = turn_event(f"fact number {number} is kept", event_id=f"event-{number}")
        log["in_flight"] = event
        try:
            answer = send(url, event, timeout=5)
        except requests.RequestException:
            return
        if answer.status_code == 202:
            log["acknowledged"].append(event["id"])
        number += 1
    log["in_flight"] = None


def test_a_killed_engine_keeps_every_acknowledged_event_once_and_takes_the_lost_one_once(
    engine_database: str,
) -> None:
    log: dict[str, Any] = {"acknowledged": [], "in_flight": None}
    stop = threading.Event()
    with engine_process(engine_database) as (url, process):
        sender = threading.Thread(target=ingest_until_stopped, args=(url, stop, log))
        sender.start()
        while len(log["acknowledged"]) < 40 and sender.is_alive():
            threading.Event().wait(0.02)
        kill(process)  # mid-ingest: the sender is still posting
        sender.join(timeout=10)
        stop.set()
    assert len(log["acknowledged"]) >= 40
    lost = log["in_flight"]
    assert lost is not None, "the engine died between two events; nothing was in flight"

    engine = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        recorded = engine.state.events
        assert set(log["acknowledged"]) <= set(recorded)
        texts = [m.text for m in engine.state.souls["pippa"].memories]
        assert len(texts) == len(set(texts)) == len(recorded)  # each event acted once
        redelivered = send(engine.url, lost)  # the outbox sends again what was not answered
        assert redelivered.status_code in (200, 202)
        assert redelivered.json()["duplicate"] == (lost["id"] in recorded)
        again = send(engine.url, lost)
        assert (again.status_code, again.json()["duplicate"]) == (200, True)
        kept = [m.text for m in engine.state.souls["pippa"].memories]
        assert kept.count(lost["message"]["tool_uses"][0]["input"]["text"]) == 1
    finally:
        engine.stop()


def test_memories_revisions_asks_and_forgets_survive_a_restart(engine_database: str) -> None:
    first = ReferenceEngine(token=TOKEN, database=engine_database, answer_delay=0.0).start()
    send(first.url, turn_event("Alice likes tea", scope="private"))
    send(first.url, turn_event("The bins go out on Tuesday", scope="household"))
    doomed = turn_event("The spare key is under the mat", scope="household")
    send(first.url, doomed)
    (item,) = recall(first.url, "spare key", viewer="7")["items"]
    assert call(first.url, "DELETE", f"/v1/souls/pippa/items/{item['id']}").status_code == 200
    asked = call(
        first.url,
        "POST",
        "/v1/asks",
        json={"soul": "pippa", "conversation": "c1", "question": "When do the bins go out?"},
    )
    head = call(first.url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()
    first.stop()

    second = ReferenceEngine(token=TOKEN, database=engine_database, answer_delay=0.0).start()
    try:
        again = call(second.url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()
        assert again == head
        assert "(private) Alice likes tea" in again["block"]
        assert "spare key" not in again["block"]
        assert recall(second.url, "spare key mat", viewer="7")["match"] == "fallback"
        answers = call(second.url, "GET", "/v1/conversations/c1/answers").json()["answers"]
        assert [a["ask_id"] for a in answers] == [asked.json()["ask_id"]]
    finally:
        second.stop()


def test_a_restarted_engine_never_names_a_revision_twice(engine_database: str) -> None:
    seen: dict[str, str] = {}

    def note(engine: ReferenceEngine) -> None:
        head = call(engine.url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()
        assert seen.setdefault(head["revision"], head["block"]) == head["block"]

    first = ReferenceEngine(token=TOKEN, database=engine_database).start()
    send(first.url, turn_event("The cat is called Miso", viewer=ALICE, scope="household"))
    note(first)
    first.reset(state=True)  # even a control-door wipe keeps the counter
    note(first)
    send(first.url, turn_event("The dog is called Rex", viewer=ALICE, scope="household"))
    note(first)
    first.stop()
    second = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        for text in ("The fish is called Bubbles", "The bird is called Kiwi"):
            send(second.url, turn_event(text, viewer=ALICE, scope="household"))
            note(second)
        assert len(seen) == 5
        numbers = sorted(int(name[1:]) for name in seen)
        assert numbers == sorted(set(numbers))
    finally:
        second.stop()


def started_and_logged(
    database: str, log: Path, line: str, *, timeout: float = 120
) -> subprocess.Popen[str]:
    """The engine process on ``database``, logging to ``log``, once the log shows ``line``."""
    with log.open("a", encoding="utf-8") as stderr:
        process = start_engine(database, free_port(), stderr=stderr)
    deadline = time.monotonic() + timeout
    while line not in log.read_text(encoding="utf-8"):
        if time.monotonic() > deadline or process.poll() is not None:
            kill(process)
            pytest.fail(f"the engine never logged {line!r}:\n{log.read_text(encoding='utf-8')}")
        time.sleep(0.01)
    return process


def vectors_of(database_url: str) -> dict[str, bytes]:
    """Each kept memory's text: its vector as written (one row an item: the table's key)."""
    with reading(database_url) as cursor:
        found = cursor.run(
            "SELECT i.text, v.vec FROM engine_vectors v JOIN engine_items i ON i.seq = v.item_seq"
        ).all()
    return {text: bytes(vec) for text, vec in found}


def test_a_backfill_killed_half_way_finishes_at_the_next_start_every_vector_once_and_whole(
    engine_database: str, tmp_path: Path
) -> None:
    notes = 6000  # twelve batches: the kill comes after the first, before the last
    database_at_0003(engine_database, ["Ella is allergic to peanuts"], notes=notes)
    total = notes + 1
    log = tmp_path / "engine.log"

    process = started_and_logged(engine_database, log, f"meaning backfill: 500/{total}")
    kill(process)  # SIGKILL mid-backfill: no batch after the one in flight is committed
    half = vectors_of(engine_database)
    assert 500 <= len(half) < total, "the kill came too late to land half-way"

    process = started_and_logged(engine_database, log, "meaning backfill: done")
    try:
        whole = vectors_of(engine_database)
        assert len(whole) == total, log.read_text(encoding="utf-8")
        some = sorted(whole)[:: notes // 20]
        assert [whole[text] for text in some] == vector_bytes(some)  # whole, not torn
        assert all(whole[text] == vec for text, vec in half.items())  # none written twice
    finally:
        kill(process)
