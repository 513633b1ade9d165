"""The reference engine's fault modes, switched at run time, for contract routes only.

``down`` (close the connection at once), ``latency`` (answer after ``seconds``), ``hang`` (accept
and never answer), ``drip`` (one byte every ``seconds``), ``error`` (``status``, 503 by default; a
3xx carries a ``Location``), ``throttle`` (429 with ``Retry-After``), ``garbage`` (invalid JSON),
``wrong_shape`` (or the given ``body``), ``oversized`` (a 2 MB answer), ``reset`` (process the
request, then reset the connection without answering), ``lone_surrogate`` (the usual answer with
``"\\ud800"``, valid JSON, added to each string, or with ``fields`` only to those under these
keys). ``paths`` limits a fault to path prefixes, and ``times`` to that many requests.
"""

import json
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reference_engine.server import EngineHandler

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


def answer_instead(handler: "EngineHandler", fault: dict[str, Any]) -> bool:
    """Apply a fault that replaces the answer; True when the request has been dealt with."""
    mode = fault["mode"]
    if mode == "down":
        handler.close_connection = True
        handler.connection.close()
        return True
    if mode == "latency":
        time.sleep(float(fault.get("seconds", 2.0)))
        return False
    if mode == "hang":
        handler.server.faults.cleared.wait(timeout=float(fault.get("seconds", 300.0)))
        handler.connection.close()
        return True
    if mode == "error":
        status = int(fault.get("status", 503))
        headers = {"Location": "http://127.0.0.1:9/elsewhere"} if 300 <= status < 400 else {}
        handler.error(status, "fault", f"Injected HTTP {status}.", **headers)
        return True
    if mode == "throttle":
        retry_after = str(fault.get("retry_after", 1))
        handler.error(429, "throttled", "Slow down.", **{"Retry-After": retry_after})
        return True
    if mode == "garbage":
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "13")
        handler.end_headers()
        handler.wfile.write(b'{"soul": "pip')
        return True
    if mode == "wrong_shape":
        handler.send_json(200, fault.get("body", {"unexpected": True, "items": "not a list"}))
        return True
    if mode == "oversized":
        huge = {"soul": "x", "revision": "r1", "viewer": None, "block": "x" * (2 * 1024 * 1024)}
        handler.send_json(200, {**huge, "items": []})
        return True
    return False


def faulted_answer(handler: "EngineHandler", fault: dict[str, Any], answer: Any) -> Any | None:
    """Send ``(status, body, headers)`` as the fault has it; None when the fault has sent it."""
    status, body, headers = answer
    if fault["mode"] == "lone_surrogate":
        return status, with_lone_surrogates(body, fault.get("fields")), headers
    if fault["mode"] == "reset":
        reset_connection(handler)
        return None
    if fault["mode"] == "drip":
        drip(handler, status, body, float(fault.get("seconds", 0.2)))
        return None
    return answer


def drip(handler: "EngineHandler", status: int, answer: Any, seconds: float) -> None:
    data = b"" if answer is None else json.dumps(answer).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    try:
        for index in range(len(data)):
            handler.wfile.write(data[index : index + 1])
            handler.wfile.flush()
            time.sleep(seconds)
    except OSError:
        return


def reset_connection(handler: "EngineHandler") -> None:
    """Close with RST: the client sees "connection reset" after the request took effect."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True
    handler.connection.close()
