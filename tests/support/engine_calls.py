"""Contract calls to the engine, as the plug-in makes them (version 3 unless told)."""

import uuid
from typing import Any

import requests

from tests.support.engine_token import TOKEN

ALICE = {"member": "7", "name": "Alice"}
BOB = {"member": "8", "name": "Bob"}


def headers(version: str = "3", **more: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": version, **more}


def call(
    url: str, method: str, path: str, *, version: str = "3", **kwargs: Any
) -> requests.Response:
    sent = {**headers(version), **kwargs.pop("headers", {})}
    return requests.request(method, url + path, headers=sent, timeout=10, **kwargs)


def turn_event(
    text: str, viewer: Any = ALICE, *, event_id: str = "", scope: str = ""
) -> dict[str, Any]:
    """A turn event whose reply used ``remember`` once, with ``text``."""
    use: dict[str, Any] = {
        "id": "call-1",
        "name": "memory",
        "input": {"verb": "remember", "text": text},
        "output": {"ok": True},
    }
    if scope:
        use["scope"] = scope
    return turn_body(viewer, [use], event_id)


def turn_body(viewer: Any, uses: list[dict[str, Any]], event_id: str = "") -> dict[str, Any]:
    """A turn event from ``viewer`` (``None``: a job) whose reply made the tool ``uses``."""
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
            "tool_uses": uses,
        },
    }


def send(url: str, event: dict[str, Any], *, timeout: float = 10) -> requests.Response:
    sent = headers(**{"Idempotency-Key": event["id"]})
    return requests.post(f"{url}/v1/events", json=event, headers=sent, timeout=timeout)


def recall(url: str, query: str, *, viewer: str | None = None, limit: int = 5) -> dict[str, Any]:
    body = {"soul": "pippa", "query": query, "viewer": viewer, "limit": limit}
    answer = call(url, "POST", "/v1/recall", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()
