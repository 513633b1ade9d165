"""The reference engine's HTTP side: contract v1 routes, fault modes and the ``/_control`` door.

Fault modes (``POST /_control/faults {"mode": ...}``) apply to contract routes only, so a test can
always reach the control routes: ``down`` (close the connection at once), ``latency`` (answer after
``seconds``), ``hang`` (accept and never answer), ``drip`` (one byte every ``seconds``), ``error``
(``status``, 503 by default; a 3xx carries a ``Location``), ``throttle`` (429 with ``Retry-After``),
``garbage`` (invalid JSON), ``wrong_shape`` (or the given ``body``), ``oversized`` (a 2 MB answer),
``reset`` (process the request, then reset the connection without answering), ``lone_surrogate``
(the usual answer with ``"\\ud800"``, valid JSON, added to each string, or with ``fields`` only to
those under these keys). ``paths`` limits a fault to path prefixes, and ``times`` to that many
requests. ``POST /_control/reset`` clears faults (``{"state": true}``
also clears memories and the request log); ``GET /_control/requests`` lists what was received.
"""

import json
import re
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from pippa_memory.reference_engine.state import EngineState, now_iso

MODES = {
    "down",
    "latency",
    "hang",
    "drip",
    "error",
    "throttle",
    "garbage",
    "wrong_shape",
    "oversized",
    "reset",
    "lone_surrogate",
}


def with_lone_surrogates(value: Any, fields: list[str] | None, *, inside: bool = False) -> Any:
    """``value`` with a lone surrogate added to each of its strings (keys left alone); with
    ``fields``, only to the strings under those keys, wherever they are."""
    inside = inside or fields is None
    if isinstance(value, str):
        return value + "\ud800" if inside else value
    if isinstance(value, dict):
        return {
            key: with_lone_surrogates(inner, fields, inside=inside or key in (fields or ()))
            for key, inner in value.items()
        }
    if isinstance(value, list):
        return [with_lone_surrogates(inner, fields, inside=inside) for inner in value]
    return value


class Faults:
    """The fault in force, if any, shared by all request threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fault: dict[str, Any] | None = None
        self.cleared = threading.Event()

    def set(self, fault: dict[str, Any]) -> None:
        with self.lock:
            self.fault = dict(fault)
            self.cleared.clear()

    def clear(self) -> None:
        with self.lock:
            self.fault = None
            self.cleared.set()

    def take(self, path: str) -> dict[str, Any] | None:
        """The fault for this request, counting down a ``times`` limit."""
        with self.lock:
            fault = self.fault
            if fault is None:
                return None
            prefixes = fault.get("paths")
            if prefixes and not any(path.startswith(p) for p in prefixes):
                return None
            if "times" in fault:
                if fault["times"] <= 0:
                    return None
                fault["times"] -= 1
            return dict(fault)


class EngineHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-answer is normal under fault modes; anything else is printed."""
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def __init__(self, address: tuple[str, int], *, state: EngineState, token: str) -> None:
        super().__init__(address, EngineHandler)
        self.state = state
        self.token = token
        self.faults = Faults()
        self.log_lock = threading.Lock()
        self.received: list[dict[str, Any]] = []


ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"^/v1/souls/([^/]+)/head$"), "head"),
    ("GET", re.compile(r"^/v1/souls/([^/]+)/blocks/([^/]+)$"), "block"),
    ("POST", re.compile(r"^/v1/events$"), "event"),
    ("POST", re.compile(r"^/v1/recall$"), "recall"),
    ("POST", re.compile(r"^/v1/asks$"), "ask"),
    ("GET", re.compile(r"^/v1/conversations/([^/]+)/answers$"), "answers"),
    ("POST", re.compile(r"^/v1/conversations/([^/]+)/answers/ack$"), "ack"),
    ("POST", re.compile(r"^/v1/wakes/brief$"), "brief"),
    ("POST", re.compile(r"^/v1/bundles$"), "bundle"),
]


class BadRequest(Exception):
    pass


class EngineHandler(BaseHTTPRequestHandler):
    server: EngineHTTPServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet by default: tests and the demo read ``/_control/requests`` instead."""

    # -- plumbing ----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("POST")

    def read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise BadRequest("The body is not JSON.") from exc

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status: int, code: str, message: str, **headers: str) -> None:
        self.send_json(status, {"error": {"code": code, "message": message}}, headers)

    def dispatch(self, method: str) -> None:
        path = self.path.split("?", 1)[0]
        try:
            body = self.read_json()
        except BadRequest as exc:
            body = exc
        if path.startswith("/_control/"):
            self.control(method, path, body)
            return
        with self.server.log_lock:
            self.server.received.append(
                {
                    "method": method,
                    "path": path,
                    "headers": {k: v for k, v in self.headers.items()},
                    "body": None if isinstance(body, BadRequest) else body,
                    "at": now_iso(),
                }
            )
        fault = self.server.faults.take(path)
        if fault and self.before_answer(fault):
            return
        status, answer, headers = self.answer(method, path, body)
        if fault and fault["mode"] == "lone_surrogate":
            answer = with_lone_surrogates(answer, fault.get("fields"))
        if fault and fault["mode"] == "reset":
            self.reset_connection()
            return
        if fault and fault["mode"] == "drip":
            self.drip(status, answer, float(fault.get("seconds", 0.2)))
            return
        self.send_json(status, answer, headers)

    # -- faults -------------------------------------------------------------------------------
    def before_answer(self, fault: dict[str, Any]) -> bool:
        """Apply a fault that replaces the answer; True when the request has been dealt with."""
        mode = fault["mode"]
        if mode == "down":
            self.close_connection = True
            self.connection.close()
            return True
        if mode == "latency":
            time.sleep(float(fault.get("seconds", 2.0)))
            return False
        if mode == "hang":
            self.server.faults.cleared.wait(timeout=float(fault.get("seconds", 300.0)))
            self.connection.close()
            return True
        if mode == "error":
            status = int(fault.get("status", 503))
            headers = {"Location": "http://127.0.0.1:9/elsewhere"} if 300 <= status < 400 else {}
            self.error(status, "fault", f"Injected HTTP {status}.", **headers)
            return True
        if mode == "throttle":
            retry_after = str(fault.get("retry_after", 1))
            self.error(429, "throttled", "Slow down.", **{"Retry-After": retry_after})
            return True
        if mode == "garbage":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "13")
            self.end_headers()
            self.wfile.write(b'{"soul": "pip')
            return True
        if mode == "wrong_shape":
            self.send_json(200, fault.get("body", {"unexpected": True, "items": "not a list"}))
            return True
        if mode == "oversized":
            self.send_json(200, {"soul": "x", "revision": "r1", "block": "x" * (2 * 1024 * 1024)})
            return True
        return False

    def drip(self, status: int, answer: Any, seconds: float) -> None:
        data = b"" if answer is None else json.dumps(answer).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                time.sleep(seconds)
        except OSError:
            return

    def reset_connection(self) -> None:
        """Close with RST: the client sees "connection reset" after the request took effect."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    # -- contract v1 --------------------------------------------------------------------------
    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        token = self.server.token
        if token and self.headers.get("Authorization") != f"Bearer {token}":
            return (
                401,
                {"error": {"code": "unauthorized", "message": "A valid bearer token is needed."}},
                {"WWW-Authenticate": "Bearer"},
            )
        if isinstance(body, BadRequest):
            return 400, {"error": {"code": "invalid_json", "message": str(body)}}, {}
        for route_method, pattern, name in ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                args = [unquote(a) for a in match.groups()]
                try:
                    return getattr(self, f"route_{name}")(*args, body=body or {})
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    message = f"The request is missing or has a bad field: {exc}"
                    return 400, {"error": {"code": "invalid_request", "message": message}}, {}
        return 404, {"error": {"code": "not_found", "message": f"No route {method} {path}."}}, {}

    def route_head(self, soul: str, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        revision, text = self.server.state.block(soul)  # type: ignore[misc]
        return 200, {"soul": soul, "revision": revision, "block": text}, {}

    def route_block(
        self, soul: str, revision: str, *, body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        found = self.server.state.block(soul, revision)
        if found is None:
            return 404, {"error": {"code": "not_found", "message": "No such revision."}}, {}
        return 200, {"soul": soul, "revision": found[0], "block": found[1]}, {}

    def route_event(self, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        key = self.headers.get("Idempotency-Key")
        if body.get("type") != "conversation.turn":
            raise ValueError("type must be conversation.turn")
        for name in ("id", "occurred_at", "soul", "conversation", "message"):
            if name not in body:
                raise KeyError(name)
        if key != body["id"]:
            return (
                400,
                {
                    "error": {
                        "code": "idempotency_key",
                        "message": "Idempotency-Key must be the id.",
                    }
                },
                {},
            )
        fresh = self.server.state.record_event(body)
        return (202 if fresh else 200), {"id": body["id"], "duplicate": not fresh}, {}

    def route_recall(self, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        limit = int(body.get("limit", 5))
        return 200, self.server.state.recall(body["soul"], str(body["query"]), limit), {}

    def route_ask(self, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        ask_id = self.server.state.ask(body["soul"], body["conversation"], str(body["question"]))
        return 202, {"ask_id": ask_id}, {}

    def route_answers(self, conversation: str, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, {"answers": self.server.state.answers(conversation)}, {}

    def route_ack(self, conversation: str, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        self.server.state.ack(conversation, list(body["ids"]))
        return 204, None, {}

    def route_brief(self, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, self.server.state.brief(body["soul"]), {}

    def route_bundle(self, *, body: Any) -> tuple[int, Any, dict[str, str]]:
        found = self.server.state.bundle(body["soul"], body["job"], body.get("revision"))
        if found is None:
            return 404, {"error": {"code": "not_found", "message": "No such revision."}}, {}
        return 200, found, {}

    # -- control ------------------------------------------------------------------------------
    def control(self, method: str, path: str, body: Any) -> None:
        if isinstance(body, BadRequest):
            self.error(400, "invalid_json", str(body))
            return
        body = body or {}
        if method == "GET" and path == "/_control/requests":
            with self.server.log_lock:
                self.send_json(200, {"requests": list(self.server.received)})
        elif method == "POST" and path == "/_control/faults":
            if body.get("mode") not in MODES:
                self.error(400, "unknown_mode", f"mode must be one of {sorted(MODES)}")
                return
            self.server.faults.set(body)
            self.send_json(200, {"fault": body})
        elif method == "POST" and path == "/_control/reset":
            self.server.faults.clear()
            if body.get("state"):
                self.server.state.clear()
                with self.server.log_lock:
                    self.server.received.clear()
            self.send_json(200, {"reset": True})
        elif method == "POST" and path == "/_control/memories":
            revision = self.server.state.remember(str(body["soul"]), str(body["text"]))
            self.send_json(200, {"revision": revision})
        elif method == "POST" and path == "/_control/settings":
            if "answer_delay" in body:
                self.server.state.answer_delay = float(body["answer_delay"])
            self.send_json(200, {"answer_delay": self.server.state.answer_delay})
        else:
            self.error(404, "not_found", f"No control route {method} {path}.")


class ReferenceEngine:
    """The reference engine on a real socket, in a background thread (tests) or the foreground."""

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, token: str = "", answer_delay: float = 1.0
    ) -> None:
        self.state = EngineState(answer_delay=answer_delay)
        self.server = EngineHTTPServer((host, port), state=self.state, token=token)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def received(self) -> list[dict[str, Any]]:
        with self.server.log_lock:
            return list(self.server.received)

    def start(self) -> "ReferenceEngine":
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def stop(self) -> None:
        self.server.faults.clear()
        self.server.shutdown()
        self.server.server_close()
        if self.thread is not None:
            self.thread.join(timeout=5)

    def set_fault(self, mode: str, **options: Any) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        self.server.faults.set({"mode": mode, **options})

    def reset(self, *, state: bool = False) -> None:
        self.server.faults.clear()
        if state:
            self.state.clear()
            with self.server.log_lock:
                self.server.received.clear()
