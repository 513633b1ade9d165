"""Fixtures the vessels' tests share: a ``responses`` mock, the retry loop's sleeps recorded
instead of waited out, and a real loopback server that drips its body."""

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import responses

from webui.vessels import http


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Delays the retry loop asked for, recorded instead of waited out."""
    delays: list[float] = []
    monkeypatch.setattr(http, "sleep", delays.append)
    return delays


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def dripping_server() -> Iterator[str]:
    """A real HTTP server on loopback that sends its headers, then one byte every 0.2 s."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    stop = threading.Event()

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            )
            while not stop.is_set():
                try:
                    connection.sendall(b" ")
                except OSError:
                    return
                time.sleep(0.2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    listener.close()
    thread.join(timeout=5)
