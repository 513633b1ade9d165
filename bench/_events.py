"""Turn events as the outbox sends them, for the benchmarks that feed the reference engine's event
route themselves: one whose reply remembered one thing, and posting it as a remember."""

import uuid
from typing import Any

SAID_AT = "2026-12-03T09:00:00Z"


def remember_event(
    text: str,
    *,
    scope: str = "household",
    viewer: dict[str, str] | None = None,
    kind: str = "chat",
    conversation: str = "",
    message: str = "",
) -> dict[str, Any]:
    """A turn event whose reply remembered ``text`` in ``scope``, for ``viewer`` (None: an
    unattended run) in a conversation of ``kind``; its conversation and message are new ones
    unless named."""
    use = {"verb": "remember", "text": text}
    return {
        "type": "conversation.turn",
        "id": str(uuid.uuid4()),
        "occurred_at": SAID_AT,
        "soul": "pippa",
        "conversation": {
            "id": conversation or str(uuid.uuid4()),
            "pinned_head": None,
            "viewer": viewer,
            "vessel": "offline",
            "kind": kind,
        },
        "message": {
            "id": message or str(uuid.uuid4()),
            "role": "assistant",
            "created_at": SAID_AT,
            "content": "Noted.",
            "tool_uses": [
                {
                    "id": "c1",
                    "name": "memory",
                    "verb": "remember",
                    "scope": scope,
                    "input": use,
                    "output": {"ok": True},
                }
            ],
        },
    }


def post_remember(session: Any, url: str, event: dict[str, Any]) -> None:
    """Post ``event`` to the engine at ``url`` with a ``requests`` session; an event the engine
    does not take (anything but a 202) ends the bench."""
    answer = session.post(
        f"{url}/v1/events", json=event, headers={"Idempotency-Key": event["id"]}, timeout=30
    )
    if answer.status_code != 202:
        raise SystemExit(f"the engine answered {answer.status_code} to a remember")
