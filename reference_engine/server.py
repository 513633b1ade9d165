"""The reference engine's HTTP side: a stdlib threading server that logs each contract request,
applies the fault in force (:mod:`.faults`) and answers it (:mod:`.routes`); ``/_control/``
requests go to the control door (:mod:`.control`), which fault modes never touch.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from reference_engine.control import answer_control_call
from reference_engine.faults import MODES, Faults, answer_instead, faulted_answer
from reference_engine.routes import answer_contract_call
from reference_engine.state import EngineState, now_iso


class EngineHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-answer is normal under fault modes; anything else is printed."""
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


class EngineHandler(BaseHTTPRequestHandler):
    server: EngineHTTPServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet by default: tests and the demo read ``/_control/requests`` instead."""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("POST")

    def do_PATCH(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802 - the stdlib's name
        self.dispatch("DELETE")

    def read_json(self) -> Any:
        """The decoded body (None when empty), or a ValueError saying it is not JSON."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return ValueError("The body is not JSON.")

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
        path, _, query = self.path.partition("?")
        body = self.read_json()
        if path.startswith("/_control/"):
            self.send_json(*answer_control_call(self.server, method, path, body))
            return
        self.log_request_received(method, path, query, body)
        fault = self.server.faults.take(path)
        if fault and answer_instead(self, fault):
            return
        answer = answer_contract_call(
            state=self.server.state,
            token=self.server.token,
            method=method,
            path=path,
            query=parse_qs(query, keep_blank_values=True),
            headers=self.headers,
            body=body,
        )
        if fault:
            answer = faulted_answer(self, fault, answer)
            if answer is None:
                return
        self.send_json(*answer)

    def log_request_received(self, method: str, path: str, query: str, body: Any) -> None:
        with self.server.log_lock:
            self.server.received.append(
                {
                    "method": method,
                    "path": path,
                    "query": query,
                    "headers": {k: v for k, v in self.headers.items()},
                    "body": None if isinstance(body, ValueError) else body,
                    "at": now_iso(),
                }
            )


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
