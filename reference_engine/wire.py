"""What every part of the reference engine's HTTP side shares: the contract header, the shape of
a response and of a refusal, raw bodies for fault modes, and the request log.

A response is ``(status, body, headers)``: ``body`` is JSON-able (None for no body) or a
:class:`RawBody` sent as it is. A :class:`Refusal` raised anywhere while a request is answered
becomes the contract's error response (:mod:`.errors` turns every exception into one).
:class:`ConnectionDropped` tells the server the connection was closed on purpose (a fault mode)
and nothing is to be written. :func:`url_map` writes the contract's and the control door's URLs
the one way.
"""

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from werkzeug.routing import Map, Rule

CONTRACT_HEADER_NAME = "X-Memory-Contract"
CONTRACT_VERSIONS = ("2", "3")
"""The contract versions this engine speaks; a call naming none is taken as version 2."""
NEWEST_VERSION = CONTRACT_VERSIONS[-1]

Response = tuple[int, Any, dict[str, str]]


@dataclass(frozen=True)
class RawBody:
    """Bytes sent as they are, in ``chunks`` (each sent and flushed on its own)."""

    chunks: Iterable[bytes]
    length: int
    content_type: str = "application/json"


class ConnectionDropped(Exception):
    """The connection was closed or reset on purpose; the server writes nothing more."""


class Refusal(Exception):
    """A request the engine answers with an error: the status, the contract's ``code``, a
    message in the engine's own words, and (for a malformed request) ``details``: one
    ``{"field", "problem"}`` per thing wrong, naming the field, never quoting its value."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.details = details or []
        self.headers = headers or {}

    def response(self) -> Response:
        """The contract's error response for this refusal."""
        return error(self.status, self.code, self.message, details=self.details, **self.headers)


def invalid(field: str, problem: str, *, code: str = "invalid_request") -> Refusal:
    """A 400 for one field that is wrong, saying which and how."""
    return Refusal(400, code, f"{field} {problem}.", details=[{"field": field, "problem": problem}])


def error(
    status: int,
    code: str,
    message: str,
    *,
    details: list[dict[str, str]] | None = None,
    **headers: str,
) -> Response:
    """The contract's error response: ``{"error": {"code", "message"}}``, with ``details`` when
    there are any."""
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    return status, {"error": body}, headers


class RequestLog:
    """Every contract request received, in order, for the control door (tests and benches)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[dict[str, Any]] = []

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.entries.append(entry)

    def all(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.entries)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


def url_map(routes: dict[str, str]) -> Map:
    """The URL map of ``routes``, each ``endpoint: "METHOD /path"``. Slashes are never merged,
    so no path is answered with a redirect: an engine that moved is a failure to the client."""
    rules = []
    for endpoint, route in routes.items():
        method, path = route.split(" ", 1)
        rules.append(Rule(path, methods=[method], endpoint=endpoint))
    return Map(rules, merge_slashes=False)
