"""The engine's brain-door client, over real sockets: one session that trusts nothing from the
environment (no proxy, no ``~/.netrc``), a connect and a read deadline, and a cap on the size of
the answer it reads (a door that answers too much is a failed call, read no further)."""

import base64
import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from reference_engine.brain_client import BrainClient, DoorFailed
from tests.support.misleading_environment import proxies_and_a_netrc_login

SECRET = "whsec_" + base64.b64encode(b"s" * 32).decode()
ANSWER = {
    "output": {"block": "In the blue tin.", "used": ["m1"]},
    "vessel": "offline",
    "synthetic": True,
    "request_id": "req-1",
}


class Door(BaseHTTPRequestHandler):
    """Answers as the server's ``reply`` says: ``ok``, ``huge`` (declared), ``flood`` (chunked,
    no length), and remembers each request's headers."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append(dict(self.headers))  # type: ignore[attr-defined]
        reply = self.server.reply  # type: ignore[attr-defined]
        body = json.dumps(ANSWER).encode() if reply == "ok" else b"x" * 200_000
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if reply == "flood":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 4096):
                piece = body[start : start + 4096]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet."""


@pytest.fixture
def door() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Door)
    server.seen, server.reply = [], "ok"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def address(server: ThreadingHTTPServer) -> str:
    return f"127.0.0.1:{server.server_address[1]}"


def test_calls_go_straight_to_the_door_whatever_the_environment_says(
    door: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    proxies_and_a_netrc_login(monkeypatch, tmp_path, "thief password stolen")
    client = BrainClient(address(door), SECRET)

    first = client.assemble("pippa", {"facts": []})
    second = client.assemble("pippa", {"facts": []})

    assert first.output["block"] == second.output["block"] == "In the blue tin."
    assert client.session.trust_env is False
    assert [h.get("Authorization") for h in door.seen] == [None, None]  # no ~/.netrc login
    assert all(h["webhook-signature"].startswith("v1,") for h in door.seen)
    client.close()


@pytest.mark.parametrize("reply", ["huge", "flood"])
def test_an_answer_larger_than_the_cap_is_a_failed_call(
    door: ThreadingHTTPServer, reply: str
) -> None:
    door.reply = reply  # type: ignore[attr-defined]
    client = BrainClient(address(door), SECRET, max_bytes=65536)

    with pytest.raises(DoorFailed) as failed:
        client.assemble("pippa", {"facts": []})

    assert failed.value.reason == "the brain door's answer was larger than 65536 bytes"
    assert not failed.value.transient
    client.close()


def test_a_door_that_takes_the_call_and_never_answers_fails_at_the_read_deadline() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog), silent
    client = BrainClient(f"127.0.0.1:{listener.getsockname()[1]}", SECRET, timeout=0.5)
    try:
        with pytest.raises(DoorFailed) as failed:
            client.assemble("pippa", {"facts": []})
    finally:
        listener.close()
        client.close()

    assert failed.value.reason == "the brain door did not answer within 0.5 s"


def test_the_engine_makes_no_http_call_outside_the_brain_clients_session() -> None:
    package = Path(__file__).resolve().parents[2] / "reference_engine"
    bare = [
        str(path.name)
        for path in package.rglob("*.py")
        if re.search(r"requests\.(get|post|put|patch|delete|head|request)\(", path.read_text())
    ]
    assert bare == []
