"""What every part of the reference engine's HTTP side shares: the contract header, the shape of
an answer, raw bodies for fault modes, and the request log.

An answer is ``(status, body, headers)``: ``body`` is JSON-able (None for no body) or a
:class:`RawBody` sent as it is. :class:`ConnectionDropped` tells the server the connection was
closed on purpose (a fault mode) and nothing is to be written.
"""

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CONTRACT_HEADER_NAME = "X-Memory-Contract"
CONTRACT_VERSIONS = ("2", "3")
"""The contract versions this engine speaks; a call naming none is taken as version 2."""
NEWEST_VERSION = CONTRACT_VERSIONS[-1]

Answer = tuple[int, Any, dict[str, str]]


@dataclass(frozen=True)
class RawBody:
    """Bytes sent as they are, in ``chunks`` (each sent and flushed on its own)."""

    chunks: Iterable[bytes]
    length: int
    content_type: str = "application/json"


class ConnectionDropped(Exception):
    """The connection was closed or reset on purpose; the server writes nothing more."""


def error(status: int, code: str, message: str, **headers: str) -> Answer:
    """The contract's error answer."""
    return status, {"error": {"code": code, "message": message}}, headers


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
