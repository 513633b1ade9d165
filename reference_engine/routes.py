"""The reference engine's contract routes (engine contract v3, and v2 as before), as plain
functions of a call.

Each route takes a :class:`Call` (the state, the parsed body, query, headers and the contract
version the caller speaks) and the path's parts, and answers ``(status, body, headers)``.
:func:`answer_contract_call` checks the bearer token and the contract version header, finds the
route, and turns the state's refusals into the contract's error answers. A version 2 caller gets
the version 2 shapes: the fields version 3 added are taken out, and its routes are not there.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from reference_engine.souls import (
    SCOPES,
    NoOwner,
    RevisionGone,
    UnknownItem,
    UnknownRevision,
)
from reference_engine.state import BadCursor, EngineState
from reference_engine.wire import (
    CONTRACT_HEADER_NAME,
    CONTRACT_VERSIONS,
    Answer,
    error,
)


class Refused(Exception):
    """A request the engine answers with an error: status, code and a message saying why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class Call:
    """One contract request: the engine's state, the JSON body, the query and the headers."""

    state: EngineState
    body: dict[str, Any]
    query: dict[str, list[str]]
    headers: Any
    version: str = "2"

    @property
    def v3(self) -> bool:
        return self.version >= "3"

    def param(self, name: str, default: str = "") -> str:
        values = self.query.get(name, [])
        if len(values) > 1:
            raise Refused(400, "invalid_request", f"{name} is given more than once")
        return values[0] if values else default

    def query_viewer(self) -> str | None:
        """The ``viewer`` query parameter: a member id, or None for an unattended run."""
        if "viewer" not in self.query:
            return None
        return member_id(self.param("viewer"))

    def body_viewer(self) -> str | None:
        """The body's ``viewer``: a member id, or None (null or absent) for an unattended run."""
        viewer = self.body.get("viewer")
        return None if viewer is None else member_id(viewer)


def member_id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise Refused(400, "invalid_request", "viewer must be a member id (a non-empty string)")
    return value


def for_version(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` as the caller's contract version has it: version 2 never had ``left_out`` on
    a block nor ``keep`` on an item."""
    if call.v3:
        return answer
    shown = without(answer, "left_out")
    if isinstance(shown.get("item"), dict):
        shown["item"] = without(shown["item"], "keep")
    if isinstance(shown.get("items"), list):
        shown["items"] = [without(i, "keep") if isinstance(i, dict) else i for i in shown["items"]]
    return shown


def route_head(call: Call, soul: str) -> Answer:
    return 200, for_version(call, call.state.block(soul, viewer=call.query_viewer())), {}


def route_block(call: Call, soul: str, revision: str) -> Answer:
    found = call.state.block(soul, revision, viewer=call.query_viewer())
    return 200, for_version(call, found), {}


def route_event(call: Call) -> Answer:
    body = call.body
    if body.get("type") != "conversation.turn":
        raise ValueError("type must be conversation.turn")
    for name in ("id", "occurred_at", "soul", "conversation", "message"):
        if name not in body:
            raise KeyError(name)
    if call.headers.get("Idempotency-Key") != body["id"]:
        raise Refused(400, "idempotency_key", "Idempotency-Key must be the id.")
    fresh = call.state.record_event(body)
    return (202 if fresh else 200), {"id": body["id"], "duplicate": not fresh}, {}


def route_recall(call: Call) -> Answer:
    body = call.body
    limit = int(body.get("limit", 5))
    if limit < 1:
        raise Refused(400, "invalid_request", "limit must be at least 1")
    found = call.state.recall(body["soul"], str(body["query"]), limit, viewer=call.body_viewer())
    return 200, for_version(call, found), {}


def route_ask(call: Call) -> Answer:
    body = call.body
    viewer = call.body_viewer()
    ask_id = call.state.ask(
        body["soul"], body["conversation"], str(body["question"]), viewer=viewer
    )
    return 202, {"ask_id": ask_id}, {}


def route_answers(call: Call, conversation: str) -> Answer:
    answers = call.state.answers(conversation)
    return 200, {"answers": answers if call.v3 else [without(a, "items") for a in answers]}, {}


def route_ack(call: Call, conversation: str) -> Answer:
    call.state.ack(conversation, list(call.body["ids"]))
    return 204, None, {}


def without(answer: dict[str, Any], *names: str) -> dict[str, Any]:
    """``answer`` without the fields a version 2 caller never had."""
    return {key: value for key, value in answer.items() if key not in names}


def route_brief(call: Call) -> Answer:
    brief = call.state.brief(call.body["soul"])
    return 200, (brief if call.v3 else without(brief, "items", "viewer", "fallback")), {}


def route_bundle(call: Call) -> Answer:
    body = call.body
    bundle = call.state.bundle(body["soul"], body["job"], body.get("revision"))
    return 200, (bundle if call.v3 else without(bundle, "items", "viewer")), {}


def route_item(call: Call, soul: str, item_id: str) -> Answer:
    """Version 3: one item the viewer may see, found by its id."""
    if not call.v3:
        raise Refused(404, "not_found", "Finding one item needs contract version 3.")
    return 200, call.state.item(soul, item_id, viewer=call.query_viewer()), {}


def route_items(call: Call, soul: str) -> Answer:
    limit = call.param("limit", "20")
    if not limit.isdigit():
        raise Refused(400, "invalid_request", "limit must be an integer from 1 to 100")
    listing = call.state.items(
        soul,
        viewer=call.query_viewer(),
        q=call.param("q"),
        limit=int(limit),
        cursor=call.param("cursor"),
    )
    return 200, for_version(call, listing), {}


def route_members(call: Call, soul: str) -> Answer:
    return 200, call.state.members(soul), {}


def route_forget(call: Call, soul: str, item_id: str) -> Answer:
    """Forget one item; for version 3, forgetting an item already forgotten is a success."""
    viewer = call.query_viewer()
    return 200, call.state.forget(soul, item_id, viewer=viewer, again_ok=call.v3), {}


def route_change_item(call: Call, soul: str, item_id: str) -> Answer:
    """Change an item's ``scope``, its ``keep`` mark (version 3), or both; at least one."""
    body = call.body
    keep_given = call.v3 and "keep" in body
    scope = body.get("scope")
    if ("scope" in body or not keep_given) and scope not in SCOPES:
        raise Refused(400, "invalid_scope", f"scope must be one of {list(SCOPES)}")
    keep = body.get("keep") if keep_given else None
    if keep_given and not isinstance(keep, bool):
        raise Refused(400, "invalid_keep", "keep must be true or false")
    viewer = call.body_viewer()
    changed = call.state.change_item(soul, item_id, viewer=viewer, scope=scope, keep=keep)
    return 200, for_version(call, changed), {}


def route_forget_member(call: Call, soul: str, member: str) -> Answer:
    forgotten = call.state.forget_member(soul, member)
    return 200, (forgotten if call.v3 else without(forgotten, "ids")), {}


ROUTES: list[tuple[str, re.Pattern[str], Callable[..., Answer]]] = [
    ("GET", re.compile(r"^/v1/souls/([^/]+)/head$"), route_head),
    ("GET", re.compile(r"^/v1/souls/([^/]+)/blocks/([^/]+)$"), route_block),
    ("POST", re.compile(r"^/v1/events$"), route_event),
    ("POST", re.compile(r"^/v1/recall$"), route_recall),
    ("POST", re.compile(r"^/v1/asks$"), route_ask),
    ("GET", re.compile(r"^/v1/conversations/([^/]+)/answers$"), route_answers),
    ("POST", re.compile(r"^/v1/conversations/([^/]+)/answers/ack$"), route_ack),
    ("POST", re.compile(r"^/v1/wakes/brief$"), route_brief),
    ("POST", re.compile(r"^/v1/bundles$"), route_bundle),
    ("GET", re.compile(r"^/v1/souls/([^/]+)/items$"), route_items),
    ("GET", re.compile(r"^/v1/souls/([^/]+)/members$"), route_members),
    ("GET", re.compile(r"^/v1/souls/([^/]+)/items/([^/]+)$"), route_item),
    ("DELETE", re.compile(r"^/v1/souls/([^/]+)/items/([^/]+)$"), route_forget),
    ("PATCH", re.compile(r"^/v1/souls/([^/]+)/items/([^/]+)$"), route_change_item),
    ("POST", re.compile(r"^/v1/souls/([^/]+)/members/([^/]+)/forget$"), route_forget_member),
]

REFUSALS: list[tuple[type[Exception], int, str, str]] = [
    (UnknownRevision, 404, "not_found", "No such revision."),
    (
        RevisionGone,
        410,
        "gone",
        "This revision's block held a memory since forgotten or made private; ask for the head.",
    ),
    (UnknownItem, 404, "not_found", "No such item, or not one this viewer may see."),
]


def answer_contract_call(
    *,
    state: EngineState,
    token: str,
    method: str,
    path: str,
    query: dict[str, list[str]],
    headers: Any,
    body: Any,
) -> Answer:
    """The answer to one contract request; ``body`` is the decoded JSON, or a ValueError."""
    if token and headers.get("Authorization") != f"Bearer {token}":
        message = "A valid bearer token is needed."
        return error(401, "unauthorized", message, **{"WWW-Authenticate": "Bearer"})
    version = headers.get(CONTRACT_HEADER_NAME, "2")
    if version not in CONTRACT_VERSIONS:
        spoken = " and ".join(CONTRACT_VERSIONS)
        message = f"This engine speaks contract versions {spoken}, not {version!r}."
        return error(400, "unsupported_contract", message)
    if isinstance(body, ValueError):
        return error(400, "invalid_json", str(body))
    for route_method, pattern, route in ROUTES:
        match = pattern.match(path)
        if match and route_method == method:
            call = Call(state=state, body=body or {}, query=query, headers=headers, version=version)
            return run_route(route, call, [unquote(a) for a in match.groups()])
    return error(404, "not_found", f"No route {method} {path}.")


def run_route(route: Callable[..., Answer], call: Call, args: list[str]) -> Answer:
    """Run one route, turning what the state refuses into the contract's error answers."""
    try:
        return route(call, *args)
    except Refused as refused:
        return error(refused.status, refused.code, refused.message)
    except NoOwner as exc:
        return error(409, "no_owner", str(exc))
    except BadCursor as exc:
        return error(400, "invalid_cursor", str(exc))
    except (UnknownRevision, RevisionGone, UnknownItem) as exc:
        for kind, status, code, message in REFUSALS:
            if isinstance(exc, kind):
                return error(status, code, message)
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return error(400, "invalid_request", f"The request is missing or has a bad field: {exc}")
