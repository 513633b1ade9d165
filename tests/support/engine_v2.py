"""Calls to the reference engine as a contract v2 client makes them, for the engine's tests."""

import uuid
from typing import Any

import requests

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN

HEADERS = {"Authorization": f"Bearer {TOKEN}", contract.CONTRACT_HEADER[0]: "2"}
ALICE = {"member": "7", "name": "Alice"}
BOB = {"member": "8", "name": "Bob"}


def call(engine: ReferenceEngine, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {**HEADERS, **kwargs.pop("headers", {})}
    return requests.request(method, engine.url + path, headers=headers, timeout=5, **kwargs)


def get(engine: ReferenceEngine, path: str, **params: str) -> dict[str, Any]:
    response = call(engine, "GET", path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def event(viewer: Any, *uses: dict[str, Any], event_id: str = "") -> dict[str, Any]:
    """A turn event from ``viewer`` whose tool uses are ``uses`` (see :func:`remember`)."""
    return {
        "type": "conversation.turn",
        "id": event_id or str(uuid.uuid4()),
        "occurred_at": "2026-12-03T09:00:00Z",
        "soul": "pippa",
        "conversation": {
            "id": "conv-1",
            "pinned_head": None,
            "viewer": viewer,
            "vessel": "offline",
            "kind": "chat" if viewer else "job",
        },
        "message": {
            "id": "msg-1",
            "role": "assistant",
            "created_at": "2026-12-03T09:00:00Z",
            "content": "Noted.",
            "tool_uses": list(uses),
        },
    }


def remember(text: str, scope: str | None = None, use_id: str = "call-1") -> dict[str, Any]:
    use = {"id": use_id, "name": "memory", "verb": "remember", "input": {"verb": "remember"}}
    use["input"]["text"] = text
    return {**use, "output": {"ok": True}, **({"scope": scope} if scope else {})}


def send(engine: ReferenceEngine, body: dict[str, Any]) -> requests.Response:
    return call(engine, "POST", "/v1/events", json=body, headers={"Idempotency-Key": body["id"]})


def version_2(schema: dict[str, Any], *added: str) -> dict[str, Any]:
    """A contract schema as a version 2 caller is answered: without the fields version 3 added."""
    return {
        **schema,
        "required": [name for name in schema["required"] if name not in added],
        "properties": {k: v for k, v in schema["properties"].items() if k not in added},
    }


def version_2_items(schema: dict[str, Any]) -> dict[str, Any]:
    """A contract schema whose items (``item``, or a list of ``items``) are version 2 items:
    without ``keep``, a kept item's ``supersedes``, ``superseded_by`` and ``decision``, or a
    recalled item's ``matched_by``, which version 3 added."""
    item = version_2(contract.ITEM, "keep")
    items_of_3 = (contract.ITEM, contract.KEPT_ITEM)
    properties = dict(schema["properties"])
    if properties.get("item") in items_of_3:
        properties["item"] = item
    listed = properties.get("items")
    if isinstance(listed, dict) and listed.get("items") in items_of_3:
        properties["items"] = {**listed, "items": item}
    if isinstance(listed, dict) and listed.get("items") is contract.RECALL_ITEM:
        properties["items"] = {**listed, "items": version_2(item, "matched_by")}
    if schema is contract.RECALL:  # version 2 says exact for a word match, never meaning
        properties["match"] = {"enum": ["exact", "fallback"]}
    return {**schema, "properties": properties}
