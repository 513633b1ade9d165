"""The brain door holds a call by a lease, answers within a total deadline, runs a bounded number
of calls at once, and replays the exact bytes of the first answer."""

import json
import time
from datetime import timedelta
from typing import Any

import pytest
import responses
from django.test import Client
from django.utils import timezone

from pippa_memory.brain.lease import CALL_SLOTS
from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import BrainCall
from provider_doubles import AnthropicKit
from tests.support.brain_door import DECIDE, NEW_SECRET, URL, call_door, signed_headers
from webui.models import Vessel

pytestmark = pytest.mark.django_db

GOOD = {"choice": "tea", "reason": "everyone likes it"}


@pytest.fixture(autouse=True)
def door(configure: Any, soul: Any) -> None:
    from django.core.cache import cache

    cache.clear()
    configure(BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="1000/min")


def post(raw: bytes, webhook_id: str) -> Any:
    return Client().post(
        URL, raw, content_type="application/json", **signed_headers(raw, webhook_id=webhook_id)
    )


def a_running_row(raw: bytes, webhook_id: str, *, lease_until: Any) -> BrainCall:

    return BrainCall.objects.create(
        request_id="k" * 32,
        webhook_id=webhook_id,
        body_sha256=keyed_sha256(raw),
        outcome=BrainCall.Outcome.RUNNING,
        lease_until=lease_until,
    )


def test_a_replay_of_a_call_whose_process_died_runs_it_again_and_answers(
    offline: Vessel,  # noqa: F811
) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    dead = a_running_row(raw, "msg_dead", lease_until=timezone.now() - timedelta(seconds=1))

    response = post(raw, "msg_dead")

    assert response.status_code == 200
    assert response.json()["output"]["choice"] in DECIDE["options"]
    row = BrainCall.objects.get(pk=dead.pk)
    assert row.outcome == BrainCall.Outcome.ANSWERED
    assert row.request_id == response["X-Request-Id"] != "k" * 32
    assert row.lease_until is None
    # And the answer it ran to is what later replays get, byte for byte.
    assert post(raw, "msg_dead").content == response.content


def test_a_running_row_from_before_leases_is_taken_over_too(offline: Vessel) -> None:  # noqa: F811
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    a_running_row(raw, "msg_old", lease_until=None)

    assert post(raw, "msg_old").status_code == 200


def test_a_replay_of_a_call_another_process_runs_now_is_still_a_409(
    offline: Vessel,  # noqa: F811
) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    a_running_row(raw, "msg_alive", lease_until=timezone.now() + timedelta(seconds=10))

    response = post(raw, "msg_alive")

    assert (response.status_code, response.json()["error"]["code"]) == (409, "in_progress")
    assert BrainCall.objects.get(webhook_id="msg_alive").outcome == BrainCall.Outcome.RUNNING


def test_a_replay_returns_the_first_calls_bytes_exactly_even_with_nuls(
    offline: Vessel,  # noqa: F811
) -> None:
    body = {
        "role": "decide",
        "soul": "pippa",
        "input": {"question": "q\u0000?", "options": ["a\u0000", "b"]},
    }
    raw = json.dumps(body).encode()

    first = post(raw, "msg_nul")
    again = post(raw, "msg_nul")

    assert first.status_code == again.status_code == 200
    assert b"\\u0000" in first.content  # the answer carries the NUL it was given
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"


@responses.activate
def test_the_door_stops_at_its_total_deadline_and_asks_no_further_vessel(
    claude: Vessel,  # noqa: F811
    configure: Any,
) -> None:
    Vessel.objects.create(
        slug="second", name="Second", adapter="offline", model="offline-1", brain_priority=9
    )
    configure(BRAIN_DEADLINE=0.3)
    kit = AnthropicKit()

    def slow_failure(request: Any) -> tuple[int, dict[str, str], str]:
        time.sleep(0.4)
        return 529, {}, json.dumps({"type": "error", "error": {"type": "overloaded_error"}})

    responses.add_callback(responses.POST, kit.url, callback=slow_failure)

    started = time.monotonic()
    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})
    took = time.monotonic() - started

    assert response.status_code == 504
    attempts = response.json()["error"]["details"]["attempts"]
    assert [a["vessel"] for a in attempts] == ["claude", "second"]
    assert attempts[1]["code"] == "timeout"  # the second vessel was never called
    assert took < 2.0


def test_past_the_cap_on_calls_at_once_the_door_answers_503_with_retry_after(
    offline: Vessel,  # noqa: F811
    configure: Any,
) -> None:
    configure(BRAIN_MAX_CONCURRENT=1)
    assert CALL_SLOTS.try_enter()  # another call holds the only slot
    try:
        response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})
    finally:
        CALL_SLOTS.leave()

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "busy"
    assert int(response["Retry-After"]) >= 1
    assert not BrainCall.objects.exists()
    assert call_door({"role": "decide", "soul": "pippa", "input": DECIDE}).status_code == 200
