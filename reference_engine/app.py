"""The reference engine as a WSGI application: gunicorn serves it in production
(:mod:`.service`), a threaded in-process server in tests (:mod:`.server`); both are real HTTP.

Each contract request is logged (for the control door), meets the fault in force
(:mod:`.faults`) and is answered by :mod:`.routes`. ``/_control/`` goes to the control door
(:mod:`.control`) when the engine was started with it, and is a 404 otherwise.
"""

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

from reference_engine.control import ControlDoor, answer_control_call
from reference_engine.faults import Faults, answer_instead, faulted_answer
from reference_engine.routes import answer_contract_call
from reference_engine.souls import now_iso
from reference_engine.state import EngineState
from reference_engine.wire import Answer, ConnectionDropped, RawBody, RequestLog, error

REASONS = {
    200: "OK",
    202: "Accepted",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    409: "Conflict",
    410: "Gone",
    429: "Too Many Requests",
}
MAX_BODY = 8 * 1024 * 1024


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


def read_json(environ: dict[str, Any]) -> Any:
    """The decoded body (None when empty), or a ValueError saying it is not JSON."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    raw = environ["wsgi.input"].read(min(length, MAX_BODY)) if length else b""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return ValueError("The body is not JSON.")


def encoded(answer: Answer) -> tuple[str, list[tuple[str, str]], Iterable[bytes]]:
    """A WSGI status line, headers and body for an answer."""
    status, body, headers = answer
    line = f"{status} {REASONS.get(status, 'Error')}"
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
        try:
            answer = self.answer(environ)
        except ConnectionDropped:
            environ["engine.dropped"] = True  # the in-process server writes nothing more
            start_response("500 Dropped", [("Content-Length", "0"), ("Connection", "close")])
            return []
        line, headers, body = encoded(answer)
        start_response(line, headers)
        return body

    def answer(self, environ: dict[str, Any]) -> Answer:
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        body = read_json(environ)
        headers = Headers(environ)
        if path.startswith("/_control/"):
            if not self.control:
                return error(404, "not_found", f"No route {method} {path}.")
            return answer_control_call(self.door, method, path, body)
        if self.log_requests:
            self.log.add(
                {
                    "method": method,
                    "path": path,
                    "query": query,
                    "headers": dict(headers.items()),
                    "body": None if isinstance(body, ValueError) else body,
                    "at": now_iso(),
                }
            )
        sock = environ.get("engine.socket") or environ.get("gunicorn.socket")
        fault = self.faults.take(path, method)
        if fault:
            instead = answer_instead(fault, self.faults, sock)
            if instead is not None:
                return instead
        answer = answer_contract_call(
            state=self.state,
            token=self.token,
            method=method,
            path=path,
            query=parse_qs(query, keep_blank_values=True),
            headers=headers,
            body=body,
        )
        return faulted_answer(fault, answer, sock) if fault else answer
