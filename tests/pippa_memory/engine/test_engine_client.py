"""The engine client on the host's one outbound exchange: it names its role, reads ``Retry-After``
as seconds or an HTTP date, and keeps its promise never to raise even when the call cannot be
made at all. Over a real socket, against the reference engine."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from pippa_memory.engine import contract
from pippa_memory.engine.client import call_engine
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from tests.support.misleading_environment import proxies_and_a_netrc_login

HEAD = "/v1/souls/pippa/head"


def test_engine_calls_name_the_memory_engine_role(memory_on: ReferenceEngine) -> None:
    assert call_engine("GET", HEAD, budget=1.0).ok

    assert memory_on.received[0]["headers"]["User-Agent"] == "pippa-webui (memory-engine)"


def test_the_environment_neither_proxies_engine_calls_nor_replaces_their_token(
    memory_on: ReferenceEngine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Proxies that are not there, and a ~/.netrc login for the engine's host: requests would use
    # both (the login replacing the Authorization header the client set).
    proxies_and_a_netrc_login(monkeypatch, tmp_path, "someone password netrc-SECRET")

    answer = call_engine("GET", HEAD, budget=1.0)

    assert answer.ok, answer.reason
    assert memory_on.received[0]["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_a_throttle_with_an_http_date_says_how_long_to_wait(memory_on: ReferenceEngine) -> None:
    in_an_hour = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    memory_on.set_fault("throttle", retry_after=in_an_hour)

    answer = call_engine("GET", HEAD, budget=1.0)

    assert answer.reason == "http_429"
    assert answer.retry_after is not None
    assert 3000 < answer.retry_after <= 3600


def test_a_token_that_cannot_be_a_header_is_absent_not_raised_and_not_quoted(
    memory_on: ReferenceEngine, configure: Any
) -> None:
    configure(TOKEN="engine-tok\nen-SECRET")

    answer = call_engine("GET", HEAD, budget=1.0)

    assert (answer.ok, answer.reason) == (False, "request_failed")
    assert "SECRET" not in answer.detail
    assert "engine-tok" not in answer.detail
    assert memory_on.received == []


def answer_with_items(items: Any) -> dict[str, Any]:
    return {"soul": "pippa", "revision": "r1", "viewer": None, "block": "", "items": items}


def test_an_answer_of_the_wrong_shape_names_where_and_which_rule_never_the_value(
    memory_on: ReferenceEngine, caplog: Any
) -> None:
    # A memory's text where the schema wants an item list: jsonschema's message would quote it.
    text = "Bob's new door code is 4471, tell nobody"
    memory_on.set_fault("wrong_shape", paths=[HEAD], body=answer_with_items(text))

    answer = call_engine("GET", HEAD, schema=contract.BLOCK, budget=1.0)

    assert answer.reason == "wrong_shape"
    assert "(rule: " in answer.detail
    for said in (answer.detail, caplog.text):
        assert "4471" not in said
        assert "door code" not in said


def test_engine_calls_from_two_threads_are_in_flight_together(
    memory_on: ReferenceEngine, configure: Any
) -> None:
    import threading
    import time

    configure(READ_TIMEOUT=10.0)
    memory_on.set_fault("latency", seconds=3.0, paths=["/v1/recall"])
    body = {"soul": "pippa", "conversation": "c", "viewer": None, "query": "q", "limit": 1}
    threads = [
        threading.Thread(
            target=call_engine, args=("POST", "/v1/recall"), kwargs={"body": body, "budget": 10.0}
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()

    # The engine holds each call for three seconds: both arriving within them means neither
    # waited for the other (the breaker does not hold a lock over the call).
    deadline = time.monotonic() + 2.5
    while len(memory_on.received) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    arrived = len(memory_on.received)
    for thread in threads:
        thread.join(timeout=15)

    assert arrived == 2
