"""The one outbound HTTP exchange every caller uses: a session that names its role and refuses a call
without a timeout, a total deadline and a size cap that hold while the body arrives, redirects
answered rather than followed, a connection read to its end kept for the next call, transport failures as the module's own exceptions (never quoting a
header), ``Retry-After`` read as seconds or an HTTP date, and full-jitter backoff within its bounds.
Over a real loopback socket."""

import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from webui.outbound_http import (
    UNWIND_SECONDS,
    BodyTooLarge,
    DeadlineExceeded,
    NoTimeLeft,
    OutgoingSession,
    RequestNotMade,
    Unreachable,
    exchange,
    full_jitter_delay,
    read_timeout,
    retry_after_seconds,
)

SESSION = OutgoingSession(role="test-role")


class Handler(BaseHTTPRequestHandler):
    """``/drip``: one byte every 0.05 s for ever; ``/big``: 64 KiB, chunked (no length declared);
    ``/declared``: a declared 64 KiB; ``/moved``: 302 elsewhere; anything else: 200 ``{}``."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.server.received.append(
            {"path": self.path, "headers": dict(self.headers), "port": self.client_address[1]}
        )
        if self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while not self.server.stopping.is_set():
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)
        elif self.path == "/big":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(16):
                self.wfile.write(b"1000\r\n" + b"x" * 4096 + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/declared":
            self.send_response(200)
            self.send_header("Content-Length", str(64 * 1024))
            self.end_headers()
            self.wfile.write(b"x" * 64 * 1024)
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up at its cap or its deadline, as it should


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    running = QuietServer(("127.0.0.1", 0), Handler)
    running.received = []
    running.stopping = threading.Event()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    running.url = f"http://127.0.0.1:{running.server_address[1]}"
    yield running
    running.stopping.set()
    running.shutdown()
    running.server_close()
    thread.join(timeout=5)


def get(url: str, *, deadline: float = 5.0, max_bytes: int = 1024, **headers: str) -> Any:
    return exchange(
        SESSION,
        "GET",
        url,
        data=None,
        headers=headers,
        connect_timeout=1.0,
        read_timeout=2.0,
        deadline_at=time.monotonic() + deadline,
        max_bytes=max_bytes,
    )


def test_the_session_names_its_role_in_the_user_agent(server: ThreadingHTTPServer) -> None:
    answer = get(server.url + "/plain")

    assert (answer.status, answer.body) == (200, b"{}")
    assert server.received[0]["headers"]["User-Agent"] == "pippa-webui (test-role)"


def test_a_connection_read_to_its_end_is_used_again_and_one_cut_off_is_not(
    server: ThreadingHTTPServer,
) -> None:
    # A vessel's next call need not open (and, over TLS, handshake) a connection of its own.
    get(server.url + "/plain")
    get(server.url + "/big", max_bytes=1_000_000)
    get(server.url + "/plain")
    with pytest.raises(BodyTooLarge):
        get(server.url + "/big", max_bytes=1024)  # dropped with its body unread
    get(server.url + "/plain")

    ports = [r["port"] for r in server.received]
    assert ports[:4] == [ports[0]] * 4
    assert ports[4] != ports[0]


def test_a_call_without_a_timeout_is_refused_before_anything_is_sent(
    server: ThreadingHTTPServer,
) -> None:
    with pytest.raises(TypeError, match="needs a timeout"):
        SESSION.get(server.url + "/plain")

    assert server.received == []


def test_a_server_that_drips_bytes_is_cut_off_at_the_deadline(server: ThreadingHTTPServer) -> None:
    # Each byte comes well inside the 2 s read timeout; only the 0.3 s deadline can end the call.
    with pytest.raises(DeadlineExceeded, match="still arriving at the deadline"):
        get(server.url + "/drip", deadline=0.3, max_bytes=1_000_000)


def test_a_read_cut_to_the_deadline_leaves_the_time_a_timed_out_read_takes_to_come_back() -> None:
    # A read that times out returns a few milliseconds past its timeout; a read cut to the time
    # left leaves them, so the call is over by its deadline. A read timeout shorter than the time
    # left is kept as it is, and a short budget still gets half of what remains.
    assert read_timeout({"read_timeout": 10.0}, 3.0) == pytest.approx(3.0 - UNWIND_SECONDS)
    assert read_timeout({"read_timeout": 1.0}, 3.0) == 1.0
    assert read_timeout({"read_timeout": 10.0}, 0.01) == pytest.approx(0.005)


def test_no_time_left_sends_nothing(server: ThreadingHTTPServer) -> None:
    with pytest.raises(NoTimeLeft):
        get(server.url + "/plain", deadline=-1.0)

    assert server.received == []


@pytest.mark.parametrize("path", ["/big", "/declared"])
def test_an_answer_over_the_cap_is_refused(server: ThreadingHTTPServer, path: str) -> None:
    with pytest.raises(BodyTooLarge, match="cap of 1024"):
        get(server.url + path, max_bytes=1024)


def test_a_redirect_is_answered_not_followed(server: ThreadingHTTPServer) -> None:
    answer = get(server.url + "/moved")

    assert answer.status == 302
    assert answer.headers["Location"] == "/elsewhere"
    assert [r["path"] for r in server.received] == ["/moved"]


def test_a_refused_connection_is_unreachable() -> None:
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # bound, then released: nothing listens there now

    with pytest.raises(Unreachable, match="ConnectionError"):
        get(f"http://127.0.0.1:{port}/plain")


def test_a_header_that_cannot_be_sent_fails_without_quoting_it(
    server: ThreadingHTTPServer,
) -> None:
    with pytest.raises(RequestNotMade) as caught:
        get(server.url + "/plain", Authorization="Bearer sk-SE\nCRET")

    assert str(caught.value) == "InvalidHeader"
    assert caught.value.__cause__ is None
    assert server.received == []


NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        ("0.5", 0.5),
        ("-4", 0.0),
        (format_datetime(NOW + timedelta(seconds=120), usegmt=True), 120.0),
        (format_datetime(NOW - timedelta(seconds=120), usegmt=True), 0.0),
        # "-0000" means "zone unknown": read as UTC, as HTTP dates are, not refused.
        ("Sun, 01 Mar 2026 12:01:00 -0000", 60.0),
        ("soon", None),
        ("inf", None),
        ("nan", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_is_read_as_seconds_or_an_http_date(
    value: str | None, seconds: float | None
) -> None:
    assert retry_after_seconds(value, now=NOW) == seconds


@pytest.mark.parametrize(
    ("attempt", "bound"), [(0, 0.5), (1, 1.0), (3, 4.0), (4, 5.0), (10_000, 5.0)]
)
def test_full_jitter_stays_within_its_bound_and_spreads_over_it(attempt: int, bound: float) -> None:
    samples = [full_jitter_delay(attempt=attempt, base=0.5, cap=5.0) for _ in range(200)]

    assert all(0 <= s <= bound for s in samples)
    # Spread over the whole range, not bunched at the bound or at nothing.
    assert min(samples) < bound / 4
    assert max(samples) > bound * 3 / 4
