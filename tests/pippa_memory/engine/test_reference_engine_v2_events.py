"""Contract v2's turn events and version header on the reference engine, over a real socket: an
event's memories keep the scope the plug-in resolved, who said them and where; an event that
cannot be kept as sent is refused whole; a call naming another contract version is refused."""

from typing import Any

import jsonschema
import pytest
import requests

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_v2 import ALICE, HEADERS, call, event, remember, send


def test_a_call_naming_another_contract_version_is_refused_and_changes_nothing(
    engine: ReferenceEngine,
) -> None:
    body = event(ALICE, remember("Kept only in version 2.", "household"))

    old = call(
        engine,
        "POST",
        "/v1/events",
        json=body,
        headers={"Idempotency-Key": body["id"], "X-Memory-Contract": "1"},
    )
    unnamed = requests.get(
        engine.url + "/v1/souls/pippa/head",
        headers={"Authorization": HEADERS["Authorization"]},
        timeout=5,
    )
    named = send(engine, body)

    assert (old.status_code, old.json()["error"]["code"]) == (400, "unsupported_contract")
    assert unnamed.status_code == 200
    assert named.status_code == 202
    assert len(engine.state.souls["pippa"].memories) == 1
    logged = [r["headers"].get("X-Memory-Contract") for r in engine.received]
    assert logged == ["1", None, "2"]


def test_an_events_memories_keep_their_scope_who_said_them_and_where(
    engine: ReferenceEngine,
) -> None:
    attended = event(
        ALICE,
        remember("Alice's private note.", "private", "u1"),
        remember("For the whole household.", "household", "u2"),
        remember("No scope given.", None, "u3"),
    )
    unattended = event(None, remember("A job's finding.", None, "u4"))

    for body in (attended, unattended):
        assert send(engine, body).status_code == 202

    items = [m.item() for m in engine.state.souls["pippa"].memories]
    for item in items:
        jsonschema.validate(item, contract.ITEM)
    assert [(i["scope"], i["said_by"]) for i in items] == [
        ("private", ALICE),
        ("household", ALICE),
        ("private", ALICE),
        ("household", None),
    ]
    assert items[0]["source"] == {"conversation": "conv-1", "message": "msg-1", "tool_use": "u1"}
    assert [i["source"]["tool_use"] for i in items] == ["u1", "u2", "u3", "u4"]


@pytest.mark.parametrize(
    ("viewer", "use"),
    [
        (None, remember("Private, but no one to own it.", "private")),
        (ALICE, remember("A scope that does not exist.", "secret")),
        ({"member": "", "name": "Nobody"}, remember("A viewer with no id.", "household")),
        ("alice", remember("A v1 viewer, a bare username.", "household")),
    ],
    ids=["private_unattended", "bad_scope", "bad_viewer", "v1_viewer"],
)
def test_an_event_that_cannot_be_kept_as_sent_is_refused_whole(
    engine: ReferenceEngine, viewer: Any, use: dict[str, Any]
) -> None:
    body = event(viewer, remember("Sent first, in the same event.", "household"), use)

    refused = send(engine, body)

    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_request")
    assert engine.state.souls.get("pippa") is None or engine.state.souls["pippa"].memories == []
    assert body["id"] not in engine.state.events


def test_the_control_door_adds_household_or_a_members_private_memory(
    engine: ReferenceEngine,
) -> None:
    door = engine.url + "/_control/memories"
    plain = requests.post(
        door, json={"soul": "pippa", "text": "Plain."}, headers=HEADERS, timeout=5
    )
    private = requests.post(
        door,
        json={"soul": "pippa", "text": "Mine.", "scope": "private", **ALICE},
        headers=HEADERS,
        timeout=5,
    )
    orphan = requests.post(
        door,
        json={"soul": "pippa", "text": "No one's.", "scope": "private"},
        headers=HEADERS,
        timeout=5,
    )

    assert (plain.status_code, private.status_code, orphan.status_code) == (200, 200, 400)
    items = [m.item() for m in engine.state.souls["pippa"].memories]
    assert [(i["text"], i["scope"], i["said_by"]) for i in items] == [
        ("Plain.", "household", None),
        ("Mine.", "private", ALICE),
    ]
