"""The engine's HTTP layer as the tests serve it, which is how production serves it: gunicorn's
threaded worker with HTTP/1.1 keep-alive; a body over the cap refused before it is read; one
access log line per request with its request id and never a member's words; an unexpected
failure answered as a JSON 500 that names the request id and never Python's words."""

import http.client
import logging
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests

from reference_engine.reading import MAX_BODY_BYTES
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, call, send, turn_event
from tests.support.engine_token import TOKEN


@pytest.fixture
def engine(tmp_path: str) -> Iterator[ReferenceEngine]:
    running = ReferenceEngine(token=TOKEN, database=f"{tmp_path}/engine.sqlite3").start()
    yield running
    running.stop()


def address(engine: ReferenceEngine) -> tuple[str, int]:
    parts = urlsplit(engine.url)
    return parts.hostname or "", parts.port or 0


def test_two_requests_share_one_kept_alive_connection(engine: ReferenceEngine) -> None:
    host, port = address(engine)
    connection = http.client.HTTPConnection(host, port, timeout=10)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        connection.request("GET", "/v1/souls/pippa/head", headers=auth)
        first = connection.getresponse()
        first.read()
        used = connection.sock
        connection.request("GET", "/v1/souls/pippa/members", headers=auth)
        second = connection.getresponse()
        second.read()
        again = connection.sock
    finally:
        connection.close()

    assert (first.status, second.status) == (200, 200)
    assert first.version == 11
    assert first.getheader("Connection") == "keep-alive"
    assert used is not None  # http.client drops a socket the server said it would close
    assert again is used  # and opens a new one for the next request


def test_a_body_declared_over_the_cap_is_refused_before_a_byte_of_it_is_sent(
    engine: ReferenceEngine,
) -> None:
    """The engine answers 413 from the Content-Length alone: the client never sends the body."""
    host, port = address(engine)
    head = (
        f"POST /v1/recall HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
    )
    with socket.create_connection((host, port), timeout=10) as raw:
        raw.sendall(head.encode())
        answer = b""
        while not answer.endswith(b"}}"):  # the error body's end; a timeout fails the test
            answer += raw.recv(65536)
        answer = answer.decode()

    assert answer.startswith("HTTP/1.1 413 ")
    assert '"code": "body_too_large"' in answer


def test_each_request_is_one_access_line_with_its_id_and_no_member_words(
    engine: ReferenceEngine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="reference_engine.app")
    words = "alice secretly plans the surprise party"
    send(engine.url, turn_event(words, ALICE))
    answer = call(
        engine.url,
        "GET",
        "/v1/souls/pippa/items",
        params={"q": words, "viewer": "7"},
        headers={"X-Request-Id": "walk-0001"},
    )

    lines = [r.getMessage() for r in caplog.records if r.name == "reference_engine.app"]
    assert answer.headers["X-Request-Id"] == "walk-0001"
    assert lines[-1].startswith("GET /v1/souls/pippa/items 200 ")
    assert lines[-1].endswith("ms request_id=walk-0001")
    assert lines[0].startswith("POST /v1/events 202 ")
    assert not [line for line in lines if "surprise" in line or "secretly" in line]


def test_an_unexpected_failure_is_a_json_500_naming_the_request_id_not_python(
    engine: ReferenceEngine, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(soul: str) -> None:
        raise RuntimeError("'list' object has no attribute 'get'")

    monkeypatch.setattr(engine.state, "members", broken)
    answer = call(engine.url, "GET", "/v1/souls/pippa/members", headers={"X-Request-Id": "r-500"})

    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "internal"
    assert "r-500" in answer.json()["error"]["message"]
    assert "attribute" not in answer.text
    logged = [r for r in caplog.records if r.name == "reference_engine.errors"]
    assert "r-500" in logged[0].getMessage()
    assert logged[0].exc_info is not None


def test_a_wrong_token_of_the_right_length_is_refused(engine: ReferenceEngine) -> None:
    wrong = "x" * len(TOKEN)
    answer = requests.get(
        engine.url + "/v1/souls/pippa/head",
        headers={"Authorization": f"Bearer {wrong}"},
        timeout=10,
    )
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"] == "Bearer"
