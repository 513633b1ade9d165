"""The reference engine's contract routes (engine contract v3, and v2 as before), as plain
functions of a call, found by Werkzeug's routing.

:data:`CONTRACT_URLS` maps each path and method to the route, named by its ``operationId`` in
``docs/engine-openapi.yaml``. :func:`contract_response` checks the contract version header,
checks the body, query and path parameters against that document (:mod:`.request_schemas`),
and runs the route; anything refused is raised, and :mod:`.errors` answers it. A version 2 caller
gets the version 2 shapes: the fields version 3 added are taken out, and its routes are not
there.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_engine import portability
from reference_engine.request_schemas import checked_body, checked_path, checked_query
from reference_engine.souls import SCOPES
from reference_engine.state import EngineState
from reference_engine.wire import (
    CONTRACT_HEADER_NAME,
    CONTRACT_VERSIONS,
    Refusal,
    Response,
    url_map,
)


@dataclass(frozen=True)
class Call:
    """One contract request: the engine's state, the checked JSON body, the checked query
    parameters (one value each), the headers and the contract version the caller speaks."""

    state: EngineState
    body: dict[str, Any]
    query: dict[str, Any]
    headers: Any
    version: str = "2"

    @property
    def v3(self) -> bool:
        return self.version >= "3"

    def query_viewer(self) -> str | None:
        """The ``viewer`` query parameter: a member id, or None for an unattended run."""
        return self.query.get("viewer")

    def body_viewer(self) -> str | None:
        """The body's ``viewer``: a member id, or None (null or absent) for an unattended run."""
        return self.body.get("viewer")


VERSION_3_ITEM = ("keep", "supersedes", "superseded_by", "decision")
"""What version 3 added to an item."""


def for_version(call: Call, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the caller's contract version has it: version 2 never had ``left_out`` on
    a block nor ``keep``, ``supersedes``, ``superseded_by`` or ``decision`` on an item."""
    if call.v3:
        return body
    shown = without(body, "left_out")
    if isinstance(shown.get("item"), dict):
        shown["item"] = without(shown["item"], *VERSION_3_ITEM)
    if isinstance(shown.get("items"), list):
        shown["items"] = [
            without(i, *VERSION_3_ITEM) if isinstance(i, dict) else i for i in shown["items"]
        ]
    return shown


def route_head(call: Call, soul: str) -> Response:
    return 200, for_version(call, call.state.block(soul, viewer=call.query_viewer())), {}


def route_block(call: Call, soul: str, revision: str) -> Response:
    found = call.state.block(soul, revision, viewer=call.query_viewer())
    return 200, for_version(call, found), {}


def route_event(call: Call) -> Response:
    body = call.body
    if call.headers.get("Idempotency-Key") != body["id"]:
        raise Refusal(400, "idempotency_key", "Idempotency-Key must be the id.")
    fresh = call.state.record_event(body)
    return (202 if fresh else 200), {"id": body["id"], "duplicate": not fresh}, {}


def route_recall(call: Call) -> Response:
    body = call.body
    limit = body.get("limit", 5)
    version = 3 if call.v3 else 2
    found = call.state.recall(
        body["soul"], body["query"], limit, viewer=call.body_viewer(), version=version
    )
    return 200, for_version(call, found), {}


def route_ask(call: Call) -> Response:
    body = call.body
    viewer = call.body_viewer()
    ask_id = call.state.ask(body["soul"], body["conversation"], body["question"], viewer=viewer)
    return 202, {"ask_id": ask_id}, {}


def route_answers(call: Call, id: str) -> Response:  # noqa: A002 - the contract's name
    answers = call.state.answers(id)
    return 200, {"answers": answers if call.v3 else [without(a, "items") for a in answers]}, {}


def route_ack(call: Call, id: str) -> Response:  # noqa: A002 - the contract's name
    call.state.ack(id, list(call.body["ids"]))
    return 204, None, {}


def without(body: dict[str, Any], *names: str) -> dict[str, Any]:
    """``body`` without the fields a version 2 caller never had."""
    return {key: value for key, value in body.items() if key not in names}


def route_brief(call: Call) -> Response:
    brief = call.state.brief(call.body["soul"])
    return 200, (brief if call.v3 else without(brief, "items", "viewer", "fallback")), {}


def route_bundle(call: Call) -> Response:
    body = call.body
    bundle = call.state.bundle(body["soul"], body["job"], body.get("revision"))
    return 200, (bundle if call.v3 else without(bundle, "items", "viewer")), {}


def route_item(call: Call, soul: str, id: str) -> Response:  # noqa: A002 - the contract's name
    """Version 3: one item the viewer may see, found by its id."""
    if not call.v3:
        raise Refusal(404, "not_found", "Finding one item needs contract version 3.")
    return 200, call.state.item(soul, id, viewer=call.query_viewer()), {}


def route_items(call: Call, soul: str) -> Response:
    """The current items the viewer may see; version 3's ``replaced=orphaned``: the replaced
    items no current memory they see replaced (forgotten, replaced again, or not theirs to see)."""
    replaced = call.query.get("replaced")
    if replaced is not None and not call.v3:
        raise Refusal(400, "invalid_request", "replaced needs contract version 3.")
    listing = call.state.items(
        soul,
        viewer=call.query_viewer(),
        q=call.query.get("q", ""),
        limit=call.query.get("limit", 20),
        cursor=call.query.get("cursor", ""),
        orphaned=replaced == "orphaned",
    )
    return 200, for_version(call, listing), {}


def route_members(call: Call, soul: str) -> Response:
    return 200, call.state.members(soul), {}


def route_forget(call: Call, soul: str, id: str) -> Response:  # noqa: A002 - the contract's name
    """Forget one item; for version 3, forgetting an item already forgotten is a success."""
    viewer = call.query_viewer()
    return 200, call.state.forget(soul, id, viewer=viewer, again_ok=call.v3), {}


def route_change_item(call: Call, soul: str, id: str) -> Response:  # noqa: A002 - the contract's name
    """Change an item's ``scope``, its ``keep`` mark (version 3), or both; at least one."""
    body = call.body
    keep_given = call.v3 and "keep" in body
    scope = body.get("scope")
    if ("scope" in body or not keep_given) and scope not in SCOPES:
        raise Refusal(400, "invalid_scope", f"scope must be one of {list(SCOPES)}")
    keep = body.get("keep") if keep_given else None
    if keep_given and not isinstance(keep, bool):
        raise Refusal(400, "invalid_keep", "keep must be true or false")
    viewer = call.body_viewer()
    changed = call.state.change_item(soul, id, viewer=viewer, scope=scope, keep=keep)
    return 200, for_version(call, changed), {}


def route_add_item(call: Call, soul: str) -> Response:
    """Version 3: keep a memory a member gives on the memory page, as ``remember`` would."""
    if not call.v3:
        raise Refusal(404, "not_found", "Adding an item needs contract version 3.")
    body = call.body
    if body["scope"] == "private" and call.body_viewer() is None:
        raise Refusal(409, "no_owner", "a private memory needs the member who said it")
    added = call.state.add_item(
        soul, text_of(body), scope=body["scope"], viewer=call.body_viewer(), name=body.get("name")
    )
    return 201, added, {}


def route_correct_item(call: Call, soul: str, id: str) -> Response:  # noqa: A002 - the contract's name
    """Version 3: new words replacing one current item, by the member's own decision."""
    if not call.v3:
        raise Refusal(404, "not_found", "Correcting an item needs contract version 3.")
    body = call.body
    corrected = call.state.correct_item(
        soul, id, text_of(body), viewer=call.body_viewer(), name=body.get("name")
    )
    return 200, corrected, {}


def route_restore_item(call: Call, soul: str, id: str) -> Response:  # noqa: A002 - the contract's name
    """Version 3: a replaced item made a current memory again."""
    if not call.v3:
        raise Refusal(404, "not_found", "Restoring an item needs contract version 3.")
    return 200, call.state.restore_item(soul, id, viewer=call.body_viewer()), {}


def text_of(body: dict[str, Any]) -> str:
    """The body's ``text``: words, at most 2,000 characters (else 400 ``invalid_text``)."""
    text = body.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > 2000:
        raise Refusal(400, "invalid_text", "text must be a memory in words, up to 2000 characters")
    return text


def route_forget_member(call: Call, soul: str, member: str) -> Response:
    forgotten = call.state.forget_member(soul, member)
    return 200, (forgotten if call.v3 else without(forgotten, "ids")), {}


def route_export(call: Call, soul: str) -> Response:
    """Version 3: one page of every live memory of the soul, oldest first, for an admin's export."""
    if not call.v3:
        raise Refusal(404, "not_found", "Exporting a soul needs contract version 3.")
    page = portability.export_page(
        call.state, soul, after=call.query.get("after", ""), limit=call.query.get("limit", 100)
    )
    return 200, page, {}


def route_import(call: Call, soul: str) -> Response:
    """Version 3: take a batch of items into the soul, idempotently by id, all or nothing."""
    if not call.v3:
        raise Refusal(404, "not_found", "Importing into a soul needs contract version 3.")
    done = portability.import_batch(
        call.state,
        soul,
        call.body["items"],
        check_only=call.body.get("check_only", False),
        after_revision=call.body.get("after_revision") or "",
    )
    return 200, done, {}


ROUTES: dict[str, Callable[..., Response]] = {
    "getHead": route_head,
    "getBlock": route_block,
    "postEvent": route_event,
    "recall": route_recall,
    "ask": route_ask,
    "getAnswers": route_answers,
    "ackAnswers": route_ack,
    "wakeBrief": route_brief,
    "bundle": route_bundle,
    "listItems": route_items,
    "listMembers": route_members,
    "findItem": route_item,
    "forgetItem": route_forget,
    "rescopeItem": route_change_item,
    "forgetMember": route_forget_member,
    "addItem": route_add_item,
    "correctItem": route_correct_item,
    "restoreItem": route_restore_item,
    "exportItems": route_export,
    "importItems": route_import,
}
"""Each route by the ``operationId`` its path and method have in ``docs/engine-openapi.yaml``."""

CONTRACT_URLS = url_map(
    {
        "getHead": "GET /v1/souls/<soul>/head",
        "getBlock": "GET /v1/souls/<soul>/blocks/<revision>",
        "postEvent": "POST /v1/events",
        "recall": "POST /v1/recall",
        "ask": "POST /v1/asks",
        "getAnswers": "GET /v1/conversations/<id>/answers",
        "ackAnswers": "POST /v1/conversations/<id>/answers/ack",
        "wakeBrief": "POST /v1/wakes/brief",
        "bundle": "POST /v1/bundles",
        "listItems": "GET /v1/souls/<soul>/items",
        "listMembers": "GET /v1/souls/<soul>/members",
        "findItem": "GET /v1/souls/<soul>/items/<id>",
        "forgetItem": "DELETE /v1/souls/<soul>/items/<id>",
        "rescopeItem": "PATCH /v1/souls/<soul>/items/<id>",
        "forgetMember": "POST /v1/souls/<soul>/members/<member>/forget",
        "addItem": "POST /v1/souls/<soul>/items",
        "correctItem": "POST /v1/souls/<soul>/items/<id>/correct",
        "restoreItem": "POST /v1/souls/<soul>/items/<id>/restore",
        "exportItems": "GET /v1/souls/<soul>/export",
        "importItems": "POST /v1/souls/<soul>/import",
    }
)


def contract_version(headers: Any) -> str:
    """The contract version the caller speaks (none named: version 2); 400 for one not spoken."""
    version = headers.get(CONTRACT_HEADER_NAME, "2")
    if version not in CONTRACT_VERSIONS:
        spoken = " and ".join(CONTRACT_VERSIONS)
        message = f"This engine speaks contract versions {spoken}; the call names another."
        raise Refusal(400, "unsupported_contract", message)
    return version


def contract_response(
    *,
    state: EngineState,
    operation: str,
    arguments: dict[str, str],
    query: dict[str, list[str]],
    headers: Any,
    body: Any,
) -> Response:
    """The response to one routed contract request; ``body`` is the decoded JSON (None: none)."""
    version = contract_version(headers)
    checked_path(operation, arguments)
    call = Call(
        state=state,
        body=checked_body(operation, body),
        query=checked_query(operation, query),
        headers=headers,
        version=version,
    )
    return ROUTES[operation](call, **arguments)
