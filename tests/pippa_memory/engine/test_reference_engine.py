"""The reference engine implements the calls contract v2 kept from v1 over a real socket, and its
fault modes and control routes behave as the tests that lean on them expect. (What v2 added, who
may see what, is in ``test_reference_engine_v2.py``.)"""

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from tests.support.engine_v2 import ALICE, event, version_2, version_2_items

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def call(engine: ReferenceEngine, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {**AUTH, **kwargs.pop("headers", {})}
    return requests.request(method, engine.url + path, headers=headers, timeout=5, **kwargs)


def version_2_answers() -> dict[str, Any]:
    """The answers schema as a version 2 caller (no contract header) is answered: each answer
    without ``items``, which version 3 added."""
    listed = contract.ANSWERS["properties"]["answers"]
    answers = {**listed, "items": version_2(listed["items"], "items")}
    return {**contract.ANSWERS, "properties": {"answers": answers}}


def turn_event(
    text: str, *, event_id: str | None = None, verb: str = "remember", scope: str = "household"
) -> dict[str, Any]:
    """A v2 turn event from Alice (member "7") whose one memory tool use has ``verb``."""
    use = {
        "id": "call-1",
        "name": "memory",
        "verb": verb,
        "scope": scope,
        "input": {"verb": verb, "text": text},
        "output": {},
    }
    return event(ALICE, use, event_id=event_id or "")


def send_event(engine: ReferenceEngine, event: dict[str, Any]) -> requests.Response:
    return call(engine, "POST", "/v1/events", json=event, headers={"Idempotency-Key": event["id"]})


def wait_for_requests(engine: ReferenceEngine, path: str, *, count: int) -> None:
    """Until the engine's request log holds ``count`` requests to ``path``; fails after 10 s."""
    deadline = time.monotonic() + 10
    while sum(1 for r in engine.received if r["path"] == path) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"the engine did not receive {count} requests to {path} within 10 s")
        time.sleep(0.01)


def test_head_and_blocks_match_the_contract_and_revisions_are_immutable(
    engine: ReferenceEngine,
) -> None:
    first = call(engine, "GET", "/v1/souls/pippa/head").json()
    jsonschema.validate(first, version_2(contract.BLOCK, "left_out"))
    send_event(engine, turn_event("Tea with honey."))

    moved = call(engine, "GET", "/v1/souls/pippa/head").json()
    again = call(engine, "GET", f"/v1/souls/pippa/blocks/{first['revision']}").json()

    assert moved["revision"] != first["revision"]
    assert "Tea with honey." in moved["block"]
    assert again == first
    assert call(engine, "GET", "/v1/souls/pippa/blocks/r999").status_code == 404


def test_events_are_recorded_once_per_id_and_remember_moves_the_head(
    engine: ReferenceEngine,
) -> None:
    event = turn_event("The cat is called Miso.")

    assert send_event(engine, event).status_code == 202
    assert send_event(engine, event).status_code == 200
    assert [m.text for m in engine.state.souls["pippa"].memories] == ["The cat is called Miso."]
    missing_key = call(engine, "POST", "/v1/events", json=turn_event("x"))
    assert missing_key.status_code == 400
    recall_only = turn_event("not a memory", verb="recall")
    send_event(engine, recall_only)
    assert len(engine.state.souls["pippa"].memories) == 1


def test_recall_matches_or_falls_back_and_says_from_what_to_what(engine: ReferenceEngine) -> None:
    for text in ["Ada's birthday is 10 December.", "The spare key is under the blue pot."]:
        send_event(engine, turn_event(text))
    body = {"soul": "pippa", "conversation": "c1", "limit": 5}

    exact = call(engine, "POST", "/v1/recall", json={**body, "query": "birthday"}).json()
    fallback = call(engine, "POST", "/v1/recall", json={**body, "query": "submarine"}).json()

    jsonschema.validate(exact, version_2_items(contract.RECALL))
    jsonschema.validate(fallback, version_2_items(contract.RECALL))
    assert exact["match"] == "exact"
    assert [i["text"] for i in exact["items"]] == ["Ada's birthday is 10 December."]
    assert exact["fallback"] is None
    assert fallback["match"] == "fallback"
    assert len(fallback["items"]) == 2
    assert fallback["fallback"]["from"] == "memories matching 'submarine'"
    assert fallback["fallback"]["to"] == "the 2 most recent memories"


def test_asks_are_answered_later_and_acknowledged_once(engine: ReferenceEngine) -> None:
    now = [1000.0]
    engine.state.clock = lambda: now[0]
    engine.state.answer_delay = 30.0
    send_event(engine, turn_event("Sunday dinner is at six."))
    asked = call(
        engine,
        "POST",
        "/v1/asks",
        json={"soul": "pippa", "conversation": "c1", "question": "dinner?"},
    )
    assert asked.status_code == 202
    jsonschema.validate(asked.json(), contract.ASK)

    now[0] += 29.9
    assert call(engine, "GET", "/v1/conversations/c1/answers").json() == {"answers": []}
    now[0] += 0.1
    ready = call(engine, "GET", "/v1/conversations/c1/answers").json()
    jsonschema.validate(ready, version_2_answers())
    (answer,) = ready["answers"]
    assert answer["ask_id"] == asked.json()["ask_id"]
    assert "Sunday dinner is at six." in answer["answer"]
    # The same answer to a version 3 caller names the one memory it quotes.
    v3 = dict([contract.CONTRACT_HEADER])
    latest = call(engine, "GET", "/v1/conversations/c1/answers", headers=v3).json()
    jsonschema.validate(latest, contract.ANSWERS)
    (same,) = latest["answers"]
    (quoted,) = same.pop("items")
    assert same == answer
    found = call(engine, "GET", f"/v1/souls/pippa/items/{quoted}", headers=v3)
    assert found.json()["item"]["text"] == "Sunday dinner is at six."

    ack = call(engine, "POST", "/v1/conversations/c1/answers/ack", json={"ids": [answer["id"]]})
    assert ack.status_code == 204
    assert call(engine, "GET", "/v1/conversations/c1/answers").json() == {"answers": []}


def test_requests_at_the_same_time_are_given_the_same_answer_to_an_ask(
    engine: ReferenceEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    send_event(engine, turn_event("Sunday dinner is at six."))
    call(engine, "POST", "/v1/asks", json={"soul": "pippa", "conversation": "c1", "question": "x"})
    # The first request to answer the ask is held inside the engine while a second one arrives.
    held, release = threading.Event(), threading.Event()
    recall = engine.state.recall

    def held_recall(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if not held.is_set():
            held.set()
            release.wait(timeout=10)
        return recall(*args, **kwargs)

    monkeypatch.setattr(engine.state, "recall", held_recall)
    answers: dict[str, list[str]] = {}

    def fetch(name: str) -> None:
        found = call(engine, "GET", "/v1/conversations/c1/answers").json()["answers"]
        answers[name] = [answer["id"] for answer in found]

    first = threading.Thread(target=fetch, args=("first",))
    first.start()
    assert held.wait(timeout=10)
    second = threading.Thread(target=fetch, args=("second",))
    second.start()
    wait_for_requests(engine, "/v1/conversations/c1/answers", count=2)
    second.join(timeout=0.5)  # safe state keeps it waiting for the first; unsafe state lets it by
    release.set()
    first.join(timeout=10)
    second.join(timeout=10)

    assert len(answers["first"]) == 1
    assert answers["second"] == answers["first"]


def test_bundles_are_deterministic_and_briefs_come_from_recent_memories(
    engine: ReferenceEngine,
) -> None:
    send_event(engine, turn_event("Bins go out on Tuesday."))
    revision = call(engine, "GET", "/v1/souls/pippa/head").json()["revision"]
    job = {"soul": "pippa", "job": {"id": "j1", "name": "morning"}, "revision": revision}

    first = call(engine, "POST", "/v1/bundles", json=job).json()
    send_event(engine, turn_event("Something later."))
    second = call(engine, "POST", "/v1/bundles", json=job).json()
    brief = call(
        engine,
        "POST",
        "/v1/wakes/brief",
        json={"soul": "pippa", "wake": {"kind": "soul_stream", "id": "w1"}},
    ).json()

    jsonschema.validate(first, version_2(contract.BUNDLE, "items", "viewer"))
    jsonschema.validate(brief, version_2(contract.BRIEF, "items", "viewer"))
    assert "items" not in first
    assert "items" not in brief
    assert first == second
    assert "Something later." not in first["bundle"]
    assert "Something later." in brief["brief"]


def test_a_wrong_or_missing_token_is_refused(engine: ReferenceEngine) -> None:
    response = requests.get(engine.url + "/v1/souls/pippa/head", timeout=5)

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_unknown_routes_and_bad_bodies_are_clear_errors(engine: ReferenceEngine) -> None:
    assert call(engine, "GET", "/v1/nowhere").status_code == 404
    broken = call(
        engine, "POST", "/v1/recall", data=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 400
    assert call(engine, "POST", "/v1/recall", json={"query": "x"}).status_code == 400


def test_faults_switch_at_run_time_and_control_routes_stay_reachable(
    engine: ReferenceEngine,
) -> None:
    set_fault = requests.post(
        engine.url + "/_control/faults",
        json={"mode": "error", "status": 503},
        headers=AUTH,
        timeout=5,
    )
    assert set_fault.status_code == 200
    assert call(engine, "GET", "/v1/souls/pippa/head").status_code == 503
    assert (
        requests.post(
            engine.url + "/_control/faults", json={"mode": "nope"}, headers=AUTH, timeout=5
        ).status_code
        == 400
    )

    requests.post(
        engine.url + "/_control/faults",
        json={"mode": "throttle", "retry_after": 7},
        headers=AUTH,
        timeout=5,
    )
    throttled = call(engine, "GET", "/v1/souls/pippa/head")
    assert (throttled.status_code, throttled.headers["Retry-After"]) == (429, "7")

    requests.post(
        engine.url + "/_control/faults",
        json={"mode": "error", "status": 301},
        headers=AUTH,
        timeout=5,
    )
    moved = call(engine, "GET", "/v1/souls/pippa/head", allow_redirects=False)
    assert moved.status_code == 301

    requests.post(engine.url + "/_control/faults", json={"mode": "down"}, headers=AUTH, timeout=5)
    with pytest.raises(requests.ConnectionError):
        call(engine, "GET", "/v1/souls/pippa/head")

    requests.post(engine.url + "/_control/reset", json={}, headers=AUTH, timeout=5)
    assert call(engine, "GET", "/v1/souls/pippa/head").status_code == 200
    listed = requests.get(engine.url + "/_control/requests", headers=AUTH, timeout=5).json()[
        "requests"
    ]
    assert [r["path"] for r in listed] == ["/v1/souls/pippa/head"] * 5
    assert all(not r["path"].startswith("/_control") for r in listed)


def test_a_reset_fault_takes_effect_before_the_connection_is_reset(engine: ReferenceEngine) -> None:
    engine.set_fault("reset", paths=["/v1/events"], times=1)
    event = turn_event("Recorded despite the reset.")

    with pytest.raises(requests.ConnectionError):
        send_event(engine, event)
    assert send_event(engine, event).status_code == 200  # the retry is a duplicate

    assert [m.text for m in engine.state.souls["pippa"].memories] == ["Recorded despite the reset."]


def test_manage_py_memory_engine_serves_the_contract(tmp_path: Path) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    process = subprocess.Popen(
        [
            *(sys.executable, "manage.py", "memory_engine", "--port", str(port), "--seed-demo"),
            *("--database", str(tmp_path / "engine.sqlite3")),
        ],
        cwd=Path(__file__).resolve().parents[3],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for _ in range(100):
            try:
                head = requests.get(f"http://127.0.0.1:{port}/v1/souls/pippa/head", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        else:
            pytest.fail("manage.py memory_engine did not start listening")
        assert head.status_code == 200
        assert "blue tin" in head.json()["block"]
    finally:
        process.terminate()
        process.wait(timeout=10)
