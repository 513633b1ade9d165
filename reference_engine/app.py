"""The reference engine as a WSGI application: gunicorn serves it in production
(:mod:`.service`) and in the tests (:mod:`.server`, in-process), both real HTTP.

Every request gets a request id (its ``X-Request-Id`` when it is a sane one, else a new one),
echoed on the response and written in one access log line (method, path, status, milliseconds,
request id: never the query string or the body, which may hold a member's words). The path,
query and body are read and checked (:mod:`.reading`), the bearer token compared in constant
time, and the route found by Werkzeug's routing (404, 405 with ``Allow``). Contract requests
are logged for the control door, meet the fault in force (:mod:`.faults`) and are answered by
:mod:`.routes`; ``/_control/`` goes to the control door (:mod:`.control`) when the engine was
started with it, and is a 404 otherwise. Whatever is raised on the way is answered by the one
handler in :mod:`.errors`.
"""

import errno
import hmac
import json
import logging
import re
import time
import uuid
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from reference_engine.control import CONTROL_URLS, ControlDoor, control_response
from reference_engine.errors import Asked, failure_response
from reference_engine.faults import Faults, faulted_response, response_instead
from reference_engine.reading import (
    decoded_json,
    printable_path,
    read_body,
    request_path,
    request_query,
)
from reference_engine.routes import CONTRACT_URLS, contract_response
from reference_engine.souls import now_iso
from reference_engine.state import EngineState
from reference_engine.wire import ConnectionDropped, RawBody, Refusal, RequestLog, Response

access_log = logging.getLogger(__name__)

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
"""A request id taken from the caller; anything else is replaced by one made here."""


class Headers:
    """The request's headers, read by name as the routes expect (case-insensitive)."""

    def __init__(self, environ: dict[str, Any]) -> None:
        self.values = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            self.values["content-type"] = environ["CONTENT_TYPE"]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        return [("-".join(p.capitalize() for p in k.split("-")), v) for k, v in self.values.items()]


def request_id_of(environ: dict[str, Any]) -> str:
    """The caller's ``X-Request-Id`` when it is a sane one, else a new one."""
    given = environ.get("HTTP_X_REQUEST_ID", "")
    return given if REQUEST_ID.match(given) else uuid.uuid4().hex


def bearer_matches(header: str | None, token: str) -> bool:
    """Whether ``header`` is ``Bearer <token>``, compared in constant time."""
    sent = (header or "").encode("latin-1", "replace")  # WSGI headers are bytes as latin-1
    return hmac.compare_digest(sent, f"Bearer {token}".encode())


def encoded(response: Response) -> tuple[str, list[tuple[str, str]], Iterable[bytes]]:
    """A WSGI status line, headers and body for a response."""
    status, body, headers = response
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Error"
    line = f"{status} {reason}"
    if isinstance(body, RawBody):
        pairs = [("Content-Type", body.content_type), ("Content-Length", str(body.length))]
        return line, pairs + list(headers.items()), body.chunks
    data = b"" if body is None else json.dumps(body).encode("utf-8", "surrogatepass")
    pairs = [("Content-Length", str(len(data)))]
    if body is not None:
        pairs.insert(0, ("Content-Type", "application/json"))
    return line, pairs + list(headers.items()), [data]


class EngineApp:
    """The WSGI application of one engine: its state, token, faults, request log and door."""

    def __init__(
        self,
        state: EngineState,
        *,
        token: str = "",
        control: bool = False,
        log_requests: bool | None = None,
    ) -> None:
        """``log_requests`` (default: with the control door, the log's only reader) keeps every
        contract request in memory; a household's engine keeps none, so it never grows."""
        self.state = state
        self.token = token
        self.control = control
        self.log_requests = control if log_requests is None else log_requests
        self.faults = Faults()
        self.log = RequestLog()
        self.door = ControlDoor(state=state, faults=self.faults, log=self.log)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.monotonic()
        asked = Asked(
            method=environ["REQUEST_METHOD"],
            path=printable_path(environ),
            request_id=request_id_of(environ),
        )
        try:
            response = self.respond(environ, asked)
        except ConnectionDropped:
            self.log_access(asked, "dropped", started)
            # gunicorn takes "not connected" as a client gone: it writes nothing, logs nothing.
            raise OSError(errno.ENOTCONN, "The connection was dropped on purpose.") from None
        except Exception as failure:  # noqa: BLE001 - the one handler: every failure answered
            response = failure_response(failure, asked)
        status, body, headers = response
        headers = {**headers, "X-Request-Id": asked.request_id}
        self.log_access(asked, str(status), started)
        line, pairs, chunks = encoded((status, body, headers))
        start_response(line, pairs)
        return chunks

    def log_access(self, asked: Asked, status: str, started: float) -> None:
        took = (time.monotonic() - started) * 1000
        access_log.info(
            "%s %s %s %.1fms request_id=%s",
            asked.method,
            asked.path,
            status,
            took,
            asked.request_id,
        )

    def check_token(self, headers: Headers) -> None:
        if self.token and not bearer_matches(headers.get("Authorization"), self.token):
            raise Refusal(
                401,
                "unauthorized",
                "A valid bearer token is needed.",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def respond(self, environ: dict[str, Any], asked: Asked) -> Response:
        """The response to one request; a refusal or failure is raised for :mod:`.errors`
        (under a fault, answered here, so that the fault acts on its response too)."""
        method = environ["REQUEST_METHOD"]
        path = request_path(environ)
        headers = Headers(environ)
        if path.startswith("/_control/"):
            return self.respond_control(environ, method, path, headers)
        raw = read_body(environ)
        try:
            body, unreadable = decoded_json(raw), None
        except Refusal as refusal:
            body, unreadable = None, refusal
        if self.log_requests:
            self.log.add(
                {
                    "method": method,
                    "path": path,
                    "query": environ.get("QUERY_STRING", ""),
                    "headers": dict(headers.items()),
                    "body": body,
                    "at": now_iso(),
                }
            )
        sock = environ.get("gunicorn.socket")
        fault = self.faults.take(path, method)
        if fault:
            instead = response_instead(fault, self.faults, sock)
            if instead is not None:
                return instead
        try:
            response = self.respond_contract(environ, method, path, headers, body, unreadable)
        except Exception as failure:
            if not fault:
                raise
            response = failure_response(failure, asked)
        return faulted_response(fault, response, sock) if fault else response

    def respond_contract(
        self,
        environ: dict[str, Any],
        method: str,
        path: str,
        headers: Headers,
        body: Any,
        unreadable: Refusal | None,
    ) -> Response:
        self.check_token(headers)
        operation, arguments = CONTRACT_URLS.bind("engine").match(path, method)
        query = request_query(environ)
        if unreadable is not None:
            raise unreadable
        return contract_response(
            state=self.state,
            operation=operation,
            arguments=arguments,
            query=query,
            headers=headers,
            body=body,
        )

    def respond_control(
        self, environ: dict[str, Any], method: str, path: str, headers: Headers
    ) -> Response:
        if not self.control:
            raise Refusal(404, "not_found", f"No route {method} {path}.")
        self.check_token(headers)
        endpoint, _ = CONTROL_URLS.bind("engine").match(path, method)
        return control_response(self.door, endpoint, decoded_json(read_body(environ)))
