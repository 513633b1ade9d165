"""The reference engine's fault modes, switched at run time, for contract routes only.

``down`` (close the connection at once), ``latency`` (answer after ``seconds``), ``hang`` (accept
and never answer), ``drip`` (one byte every ``seconds``), ``error`` (``status``, 503 by default; a
3xx carries a ``Location``), ``throttle`` (429 with ``Retry-After``), ``garbage`` (invalid JSON),
``wrong_shape`` (or the given ``body``), ``oversized`` (a 2 MB response), ``reset`` (process the
request, then reset the connection without answering), ``lone_surrogate`` (the usual response with
``"\\ud800"``, valid JSON, added to each string, or with ``fields`` only to those under these
keys). ``paths`` limits a fault to path prefixes, ``methods`` to those HTTP methods (so a
forget's ``DELETE`` can fail while the item's lookup ``GET`` on the same path answers), and
``times`` to that many requests.

Faults that act on the connection (``down``, ``hang``, ``reset``) need the request's socket,
gunicorn puts in the WSGI environ (``gunicorn.socket``).
"""

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

from reference_engine.wire import ConnectionDropped, RawBody, Response, error

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

    def take(self, path: str, method: str = "") -> dict[str, Any] | None:
        """The fault for this request, counting down a ``times`` limit."""
        with self.lock:
            fault = self.fault
            if fault is None:
                return None
            prefixes = fault.get("paths")
            if prefixes and not any(path.startswith(p) for p in prefixes):
                return None
            methods = fault.get("methods")
            if methods and method not in methods:
                return None
            if "times" in fault:
                if fault["times"] <= 0:
                    return None
                fault["times"] -= 1
            return dict(fault)


def drop(sock: socket.socket | None, *, reset: bool = False) -> None:
    """Close the request's connection without a response (with RST when ``reset``)."""
    if sock is not None:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    raise ConnectionDropped


def response_instead(
    fault: dict[str, Any], faults: Faults, sock: socket.socket | None
) -> Response | None:
    """The response a fault sends instead of the route's (None: the route answers).

    ``down`` and ``hang`` raise :class:`ConnectionDropped` once the connection is closed.
    """
    mode = fault["mode"]
    if mode == "down":
        drop(sock)
    if mode == "latency":
        time.sleep(float(fault.get("seconds", 2.0)))
        return None
    if mode == "hang":
        faults.cleared.wait(timeout=float(fault.get("seconds", 300.0)))
        drop(sock)
    if mode == "error":
        status = int(fault.get("status", 503))
        headers = {"Location": "http://127.0.0.1:9/elsewhere"} if 300 <= status < 400 else {}
        return error(status, "fault", f"Injected HTTP {status}.", **headers)
    if mode == "throttle":
        retry_after = str(fault.get("retry_after", 1))
        return error(429, "throttled", "Slow down.", **{"Retry-After": retry_after})
    if mode == "garbage":
        return 200, RawBody([b'{"soul": "pip'], 13), {}
    if mode == "wrong_shape":
        return 200, fault.get("body", {"unexpected": True, "items": "not a list"}), {}
    if mode == "oversized":
        huge = {"soul": "x", "revision": "r1", "viewer": None, "block": "x" * (2 * 1024 * 1024)}
        return 200, {**huge, "items": []}, {}
    return None


def faulted_response(
    fault: dict[str, Any], response: Response, sock: socket.socket | None
) -> Response:
    """The route's response as the fault has it (``reset`` raises :class:`ConnectionDropped`)."""
    status, body, headers = response
    if fault["mode"] == "lone_surrogate":
        return status, with_lone_surrogates(body, fault.get("fields")), headers
    if fault["mode"] == "reset":
        drop(sock, reset=True)
    if fault["mode"] == "drip":
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        return status, RawBody(dripped(data, float(fault.get("seconds", 0.2))), len(data)), headers
    return response


def dripped(data: bytes, seconds: float) -> Iterator[bytes]:
    for index in range(len(data)):
        yield data[index : index + 1]
        time.sleep(seconds)
