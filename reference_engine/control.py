"""The reference engine's ``/_control`` door, for tests and benches; fault modes never touch it.

It answers only when the engine was started with ``--control`` (``control=True``); otherwise
every ``/_control/`` path is a 404, so a household's engine cannot be faulted or written to
around the contract.

``POST /_control/faults {"mode", ...}`` switches a fault on, ``POST /_control/reset`` clears it
(``{"state": true}`` also clears memories and the request log), ``GET /_control/requests`` lists
what was received, ``POST /_control/memories {"soul", "text", "scope"?, "member"?, "name"?}`` adds
a memory directly, and ``POST /_control/settings {"answer_delay"}`` changes how long asks take.
"""

from dataclasses import dataclass
from typing import Any

from reference_engine.faults import MODES, Faults
from reference_engine.souls import SCOPES
from reference_engine.state import EngineState
from reference_engine.wire import Answer, RequestLog, error


@dataclass(frozen=True)
class ControlDoor:
    """What the control door reaches: the state, the faults and the request log."""

    state: EngineState
    faults: Faults
    log: RequestLog


def answer_control_call(door: ControlDoor, method: str, path: str, body: Any) -> Answer:
    """The answer to one control request; ``body`` is the decoded JSON, or a ValueError."""
    if isinstance(body, ValueError):
        return error(400, "invalid_json", str(body))
    body = body or {}
    if method == "GET" and path == "/_control/requests":
        return 200, {"requests": door.log.all()}, {}
    if method == "POST" and path == "/_control/faults":
        if body.get("mode") not in MODES:
            return error(400, "unknown_mode", f"mode must be one of {sorted(MODES)}")
        door.faults.set(body)
        return 200, {"fault": body}, {}
    if method == "POST" and path == "/_control/reset":
        door.faults.clear()
        if body.get("state"):
            door.state.clear()
            door.log.clear()
        return 200, {"reset": True}, {}
    if method == "POST" and path == "/_control/memories":
        return add_memory(door, body)
    if method == "POST" and path == "/_control/settings":
        if "answer_delay" in body:
            try:
                door.state.answer_delay = float(body["answer_delay"])
            except (TypeError, ValueError):
                return error(400, "invalid_request", "answer_delay must be a number of seconds")
        return 200, {"answer_delay": door.state.answer_delay}, {}
    return error(404, "not_found", f"No control route {method} {path}.")


def add_memory(door: ControlDoor, body: dict[str, Any]) -> Answer:
    """Add one memory as a test or demo asks: household and said by no one unless told."""
    soul, text = body.get("soul"), body.get("text")
    scope, member = body.get("scope", "household"), body.get("member")
    if not isinstance(soul, str) or not soul or not isinstance(text, str) or not text.strip():
        return error(400, "invalid_request", "soul and text must be non-empty strings")
    if scope not in SCOPES:
        return error(400, "invalid_scope", f"scope must be one of {list(SCOPES)}")
    if member is not None and (not isinstance(member, str) or not member):
        return error(400, "invalid_request", "member must be a member id (a non-empty string)")
    if scope == "private" and member is None:
        return error(400, "no_owner", "a private memory needs the member who said it")
    name = body.get("name")
    revision = door.state.remember(
        soul, text, scope=scope, member=member, name=str(name) if name else None
    )
    return 200, {"revision": revision}, {}
