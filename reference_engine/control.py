"""The reference engine's ``/_control`` door, for tests and benches; fault modes never touch it.

It answers only when the engine was started with ``--control`` (``control=True``); otherwise
every ``/_control/`` path is a 404, so a household's engine cannot be faulted or written to
around the contract. When the engine has a token, the door asks for it as every route does.

``POST /_control/faults {"mode", ...}`` switches a fault on, ``POST /_control/reset`` clears it
(``{"state": true}`` also clears memories and the request log), ``GET /_control/requests`` lists
what was received (``Authorization`` redacted), ``POST /_control/memories {"soul", "text",
"scope"?, "member"?, "name"?}`` adds a memory directly, and ``POST /_control/settings
{"answer_delay"}`` changes how long asks take.
"""

from dataclasses import dataclass
from typing import Any

from reference_engine.faults import MODES, Faults
from reference_engine.souls import SCOPES
from reference_engine.state import EngineState
from reference_engine.wire import Refusal, RequestLog, Response, invalid, url_map

REDACTED = "[redacted]"
SECRET_HEADERS = {"authorization", "cookie", "proxy-authorization"}

CONTROL_URLS = url_map(
    {
        "requests": "GET /_control/requests",
        "faults": "POST /_control/faults",
        "reset": "POST /_control/reset",
        "memories": "POST /_control/memories",
        "settings": "POST /_control/settings",
    }
)


@dataclass(frozen=True)
class ControlDoor:
    """What the control door reaches: the state, the faults and the request log."""

    state: EngineState
    faults: Faults
    log: RequestLog


def redacted(entry: dict[str, Any]) -> dict[str, Any]:
    """A request log entry as the door shows it: no credential among its headers."""
    headers = {
        name: REDACTED if name.lower() in SECRET_HEADERS else value
        for name, value in entry.get("headers", {}).items()
    }
    return {**entry, "headers": headers}


def control_response(door: ControlDoor, endpoint: str, body: Any) -> Response:
    """The response to one routed control request; ``body`` is the decoded JSON (None: none)."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise invalid("body", "must be an object")
    if endpoint == "requests":
        return 200, {"requests": [redacted(entry) for entry in door.log.all()]}, {}
    if endpoint == "faults":
        if body.get("mode") not in MODES:
            raise Refusal(400, "unknown_mode", f"mode must be one of {sorted(MODES)}")
        door.faults.set(body)
        return 200, {"fault": body}, {}
    if endpoint == "reset":
        door.faults.clear()
        if body.get("state"):
            door.state.clear()
            door.log.clear()
        return 200, {"reset": True}, {}
    if endpoint == "memories":
        return add_memory(door, body)
    return change_settings(door, body)


def change_settings(door: ControlDoor, body: dict[str, Any]) -> Response:
    if "answer_delay" in body:
        delay = body["answer_delay"]
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            raise invalid("answer_delay", "must be a number of seconds")
        door.state.answer_delay = float(delay)
    return 200, {"answer_delay": door.state.answer_delay}, {}


def add_memory(door: ControlDoor, body: dict[str, Any]) -> Response:
    """Add one memory as a test or demo asks: household and said by no one unless told."""
    soul, text = body.get("soul"), body.get("text")
    scope, member = body.get("scope", "household"), body.get("member")
    if not isinstance(soul, str) or not soul or not isinstance(text, str) or not text.strip():
        raise Refusal(400, "invalid_request", "soul and text must be non-empty strings")
    if scope not in SCOPES:
        raise Refusal(400, "invalid_scope", f"scope must be one of {list(SCOPES)}")
    if member is not None and (not isinstance(member, str) or not member):
        raise invalid("member", "must be a member id (a non-empty string)")
    if scope == "private" and member is None:
        raise Refusal(400, "no_owner", "a private memory needs the member who said it")
    name = body.get("name")
    revision = door.state.remember(
        soul, text, scope=scope, member=member, name=str(name) if name else None
    )
    return 200, {"revision": revision}, {}
