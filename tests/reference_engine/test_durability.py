"""The engine keeps what it acknowledged: across a SIGKILL, a restart, and in revision names."""

import threading
from typing import Any

import requests

from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, call, recall, send, turn_event
from tests.support.engine_processes import engine_process, kill
from tests.support.engine_token import TOKEN


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
