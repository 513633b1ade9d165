"""The one place a failure becomes a response: every exception raised while a request is
answered turns into the contract's ``{"error": {"code", "message"}}`` (with ``details`` for a
malformed request) and the right status.

Refusals (:class:`~.wire.Refusal`) and the engine's own refusals (an unknown revision, a gone
block, an unknown item, no owner, a bad cursor, an event that cannot be kept) say why in the
engine's own words. Routing answers ``404 not_found`` for an unknown route and ``405
method_not_allowed`` with ``Allow``. Anything else is a ``500 internal`` that says only that
the engine failed and under which request id its log has the details: Python's own words never
reach the caller.
"""

import logging
from dataclasses import dataclass

from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import RoutingException

from reference_engine.events import BadEvent
from reference_engine.keeping import NotCurrent, SameWords
from reference_engine.souls import NoOwner, RevisionGone, UnknownItem, UnknownRevision
from reference_engine.state import BadCursor
from reference_engine.storage.portable import ImportConflict
from reference_engine.wire import Refusal, Response, error

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Asked:
    """What a request asked, for an error's words and the log: never its query or body."""

    method: str
    path: str
    request_id: str


KNOWN: list[tuple[type[Exception], int, str, str | None]] = [
    (UnknownRevision, 404, "not_found", "No such revision."),
    (
        RevisionGone,
        410,
        "gone",
        "This revision's block held a memory since forgotten or made private; ask for the head.",
    ),
    (UnknownItem, 404, "not_found", "No such item, or not one this viewer may see."),
    (NoOwner, 409, "no_owner", None),
    (BadCursor, 400, "invalid_cursor", None),
    (BadEvent, 400, "invalid_request", None),
    (ImportConflict, 400, "import_conflict", None),
    (NotCurrent, 409, "not_current", None),
    (SameWords, 400, "same_words", None),
]
"""The engine's own refusals: status, code, and the message (None: the refusal's own words)."""


def failure_response(failure: Exception, asked: Asked) -> Response:
    """The contract's error response for ``failure``; an unexpected one is logged, and its words
    kept out of the response."""
    if isinstance(failure, Refusal):
        return failure.response()
    if isinstance(failure, MethodNotAllowed):
        allowed = ", ".join(sorted(failure.valid_methods or []))
        message = f"{asked.method} is not allowed on {asked.path}; it takes {allowed}."
        return error(405, "method_not_allowed", message, Allow=allowed)
    if isinstance(failure, NotFound | RoutingException):  # a redirect too: none is ever sent
        return error(404, "not_found", f"No route {asked.method} {asked.path}.")
    for kind, status, code, message in KNOWN:
        if isinstance(failure, kind):
            return error(status, code, message or str(failure))
    logger.error(
        "The engine failed answering %s %s (request %s)",
        asked.method,
        asked.path,
        asked.request_id,
        exc_info=failure,
    )
    message = f"The engine failed to answer; its log says why under request id {asked.request_id}."
    return error(500, "internal", message)
