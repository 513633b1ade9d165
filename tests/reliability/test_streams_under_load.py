"""The server as ``make run`` and the production profile start it (the ``Procfile``'s web command,
gunicorn with gthread workers) keeps its pages answering within a second while 30 streamed replies
are being written and 40 slow brain-door calls press on the door, and a member past the cap on
replies being written at once is refused at once, by any worker."""

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.brain_door import DECIDE
from tests.support.held_streams import HeldStream
from tests.support.production_site import (
    DOOR_SECRET,
    brain_vessel,
    door_headers,
    household,
    production_server,
)
from webui.models import Message

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # One at a time: each starts the production gunicorn, and beside the load test on PostgreSQL
    # another would share its hundred connections.
    pytest.mark.xdist_group("production_server"),
]

MEMBERS = 8
STREAMS = 30
BRAIN_CALLS = 40
#: Seconds the slow provider takes over each brain call.
BRAIN_CALL_SECONDS = 12.0
#: Pieces at half a second each: every stream stays open for about thirty seconds.
TEXT = " ".join(f"piece{n}" for n in range(60))
PACE_SECONDS = "0.5"
#: The server's settings for the load: paced offline replies, the brain door open.
LOAD_SETTINGS = {
    "WEBUI_OFFLINE_PACE_SECONDS": PACE_SECONDS,
    "PIPPA_MEMORY_BRAIN_SECRET": DOOR_SECRET,
    "PIPPA_MEMORY_BRAIN_RATE": "100000/min",
    # No idle thread keeps a connection: the load stays within PostgreSQL's default 100.
    "DJANGO_CONN_MAX_AGE": "0",
}
#: What the member's page must answer within.
PAGE_SECONDS = 1.0


class SlowProvider(ThreadingHTTPServer):
    """An OpenAI-compatible provider on loopback that answers each ``decide`` call validly (the
    first option, with a reason) after :data:`BRAIN_CALL_SECONDS`; ``in_flight`` counts the calls
    it holds now."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), SlowHandler)
        self.in_flight = 0
        self.most_in_flight = 0
        self.count_lock = threading.Lock()

    def held(self, change: int) -> None:
        with self.count_lock:
            self.in_flight += change
            self.most_in_flight = max(self.most_in_flight, self.in_flight)


class SlowHandler(BaseHTTPRequestHandler):
    server: SlowProvider

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        schema = request["response_format"]["json_schema"]["schema"]
        self.server.held(+1)
        try:
            time.sleep(BRAIN_CALL_SECONDS)
        finally:
            self.server.held(-1)
        choice = schema["properties"]["choice"]["enum"][0]
        answer = {"choice": choice, "confidence": 0.5, "reason": "The first option will do."}
        message = {"role": "assistant", "content": json.dumps(answer)}
        body = json.dumps(
            {
                "id": "chatcmpl-slow",
                "object": "chat.completion",
                "created": 0,
                "model": "slow-1",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def slow_provider() -> Iterator[SlowProvider]:
    provider = SlowProvider()
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    yield provider
    provider.shutdown()
    provider.server_close()


def brain_caller(url: str, stop: threading.Event, statuses: list[int]) -> None:
    """Signed brain-door calls, one after another until ``stop``: a refused one (503 busy) is
    sent again a second later, as a caller honouring a short ``Retry-After`` would."""
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE})
    while not stop.is_set():
        try:
            status = requests.post(
                f"{url}/api/memory/brain/", data=raw, headers=door_headers(raw), timeout=60
            ).status_code
        except requests.RequestException:
            status = 0
        statuses.append(status)
        if status != 200:
            stop.wait(1.0)


@contextmanager
def pressed_brain_door(url: str) -> Iterator[list[int]]:
    """:data:`BRAIN_CALLS` callers pressing on the brain door until the block ends; the statuses
    they were answered with."""
    stop = threading.Event()
    statuses: list[int] = []
    callers = [
        threading.Thread(target=brain_caller, args=(url, stop, statuses))
        for _ in range(BRAIN_CALLS)
    ]
    for caller in callers:
        caller.start()
    try:
        yield statuses
    finally:
        stop.set()
        for caller in callers:
            caller.join(timeout=60)


def open_streams(url: str, members: list[tuple[dict[str, str], list[str]]]) -> list[HeldStream]:
    """A stream in each of the members' conversations, each once its reply is being written."""
    streams = [
        HeldStream(f"{url}/api/conversations/{conversation}/messages/", headers, TEXT)
        for headers, conversations in members
        for conversation in conversations
    ]
    for stream in streams:
        stream.start()
    for stream in streams:
        assert stream.started(timeout=90), (
            f"a stream never started: {stream.status} {stream.last()} {stream.failure!r}"
        )
    return streams


def timed_get(url: str, headers: dict[str, str] | None = None) -> tuple[float, int]:
    """Seconds a GET of ``url`` took, and its status."""
    started = time.monotonic()
    response = requests.get(url, headers=headers, timeout=30)
    return time.monotonic() - started, response.status_code


def test_pages_answer_within_a_second_with_30_streams_and_40_slow_brain_calls(
    tmp_path: Path, slow_provider: SlowProvider
) -> None:
    # 30 streams over 8 members: six at their cap of four, two with three; the first member has
    # a fifth conversation, for a stream past the cap.
    members = household([5, 4, 4, 4, 4, 4, 3, 3])
    headers, conversations = members[0]
    members[0] = (headers, conversations[:4])
    brain_vessel("slow", slow_provider.server_address[1], model="slow-1")
    with (
        production_server(tmp_path, **LOAD_SETTINGS) as (url, _server),
        pressed_brain_door(url) as brain_statuses,
    ):
        streams = open_streams(url, members)
        # Both workers run as many brain calls as the door lets them (4 each).
        deadline = time.monotonic() + 30
        while slow_provider.in_flight < 8 and time.monotonic() < deadline:
            time.sleep(0.1)
        busy_door = slow_provider.in_flight

        chat_page = f"{url}/conversations/{conversations[0]}/"
        timings = [timed_get(chat_page, headers) for _ in range(5)]
        timings += [timed_get(f"{url}/accounts/login/") for _ in range(5)]
        still_open = sum(not stream.ended.is_set() for stream in streams)
        with requests.post(
            f"{url}/api/conversations/{conversations[4]}/messages/",
            json={"text": "one more"},
            headers=headers,
            stream=True,
            timeout=30,
        ) as past_cap:
            refusal = past_cap.json() if past_cap.status_code == 429 else {}
        for stream in streams:
            stream.join(timeout=120)

    assert busy_door == 8
    assert still_open == STREAMS
    assert [status for _, status in timings] == [200] * 10
    slowest = max(seconds for seconds, _ in timings)
    assert slowest < PAGE_SECONDS, f"a page took {slowest:.2f} s: {timings}"
    assert past_cap.status_code == 429
    assert refusal["error"]["code"] == "too_many_replies"
    assert int(past_cap.headers["Retry-After"]) > 0
    assert set(brain_statuses) <= {200, 503}, brain_statuses
    assert 200 in brain_statuses
    assert [stream.last()[0] for stream in streams] == ["done"] * STREAMS
    assert Message.objects.filter(role="assistant").count() == STREAMS
    assert not Message.objects.filter(content="one more").exists()
