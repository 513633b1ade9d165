"""Hostile calls on the brain door, signed as the engine signs: text that cannot be stored, nesting
that would exhaust the parser, bodies past Django's cap, chunked bodies, over-long webhook-ids, and
failures nobody planned for. Each gets the door's own error shape, and its audit row always ends:
never ``running``, so a replay of the id is never a 409 for ever."""

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client

from pippa_memory.brain import views
from pippa_memory.brain.service import Judgement
from pippa_memory.models import BrainCall
from tests.support.brain_door import DECIDE, NEW_SECRET, URL, call_door, signed_headers
from webui.models import Vessel

pytestmark = pytest.mark.django_db

DEEP = 50_000


@pytest.fixture(autouse=True)
def door(configure: Any, soul: Any) -> None:
    from django.core.cache import cache

    cache.clear()  # the throttle's counters
    configure(BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="1000/min")


def post_signed(raw: bytes, **sign: Any) -> Any:
    return Client().post(URL, raw, content_type="application/json", **signed_headers(raw, **sign))


def assert_door_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code
    return error


def test_a_lone_surrogate_in_the_role_is_a_400_naming_it_and_the_row_ends(
    offline: Vessel,
) -> None:
    raw = b'{"role": "dec\\ud800ide", "soul": "pippa", "input": {}}'

    response = post_signed(raw, webhook_id="msg_surrogate")

    error = assert_door_error(response, 400, "invalid")
    assert "role" in error["details"]
    assert BrainCall.objects.get().outcome == "invalid"
    replay = post_signed(raw, webhook_id="msg_surrogate")
    assert (replay.status_code, replay["Idempotent-Replayed"]) == (400, "true")


def test_a_lone_surrogate_deep_in_the_input_names_its_path(offline: Vessel) -> None:
    raw = b'{"role": "decide", "soul": "pippa", "input": {"options": ["tea", "\\udc00"]}}'

    response = post_signed(raw)

    error = assert_door_error(response, 400, "invalid")
    assert "input.options.1" in error["details"]


@pytest.mark.parametrize("depth", [40, DEEP], ids=["past-the-limit", "past-the-parser"])
def test_deep_nesting_is_a_400_and_the_row_ends_so_a_replay_is_not_a_409(
    offline: Vessel, depth: int
) -> None:
    raw = '{"role": "decide", "soul": "pippa", "input": ' + "[" * depth + "]" * depth + "}"
    raw_bytes = raw.encode()

    response = post_signed(raw_bytes, webhook_id="msg_deep")

    error = assert_door_error(response, 400, "parse_error")
    assert "nested" in error["message"]
    assert BrainCall.objects.get().outcome == "invalid"
    assert post_signed(raw_bytes, webhook_id="msg_deep").status_code == 400


def test_a_number_too_long_to_read_is_a_400_and_the_row_ends(offline: Vessel) -> None:
    raw = b'{"role": "decide", "soul": "pippa", "input": {"n": ' + b"9" * 5000 + b"}}"

    response = post_signed(raw)

    assert_door_error(response, 400, "parse_error")
    assert BrainCall.objects.get().outcome == "invalid"


def test_nan_is_not_json_and_is_a_400(offline: Vessel) -> None:
    raw = b'{"role": "decide", "soul": "pippa", "input": {"question": NaN}}'

    response = post_signed(raw)

    error = assert_door_error(response, 400, "parse_error")
    assert "NaN" in error["message"]


def test_a_body_past_djangos_own_cap_is_a_413_with_an_audit_row(
    configure: Any, settings: Any, offline: Vessel
) -> None:
    configure(BRAIN_MAX_BODY_BYTES=100_000)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = {"role": "decide", "soul": "pippa", "input": {**DECIDE, "context": "x" * 2000}}

    response = call_door(body)

    error = assert_door_error(response, 413, "too_large")
    assert "1000 bytes" in error["message"]
    assert BrainCall.objects.get().outcome == "too_large"


def test_an_unexpected_failure_is_a_500_in_the_doors_shape_and_the_row_ends_failed(
    offline: Vessel, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(body: Any, *, deadline_at: float) -> Judgement:
        raise KeyError("something nobody planned for")

    monkeypatch.setattr(views, "run_judgement", broken)
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()

    response = post_signed(raw, webhook_id="msg_broken")

    error = assert_door_error(response, 500, "internal_error")
    assert "KeyError" in error["message"]
    row = BrainCall.objects.get()
    assert (row.outcome, row.status_code) == ("failed", 500)
    assert json.loads(row.response_body)["error"]["code"] == "internal_error"
    assert row.latency_ms is not None
    replay = post_signed(raw, webhook_id="msg_broken")
    assert (replay.status_code, replay["Idempotent-Replayed"]) == (500, "true")


def test_an_answer_that_cannot_be_stored_still_ends_the_row_failed(
    offline: Vessel, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = Judgement(
        output={"choice": "tea\ud800"},
        vessel="offline",
        model="m",
        usage={},
        repaired=False,
        synthetic=False,
    )
    monkeypatch.setattr(views, "run_judgement", lambda body, deadline_at: answer)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert_door_error(response, 500, "internal_error")
    assert BrainCall.objects.get().outcome == "failed"


def test_a_webhook_id_longer_than_the_column_is_refused_not_truncated_into_another(
    offline: Vessel,
) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    stored = "msg_" + "a" * 251
    first = post_signed(raw, webhook_id=stored)

    response = post_signed(raw, webhook_id=stored + "-another-call")

    assert first.status_code == 200
    error = assert_door_error(response, 400, "invalid_webhook_id")
    assert "255" in error["message"]
    assert "Idempotent-Replayed" not in response
    assert list(BrainCall.objects.values_list("webhook_id", flat=True).order_by("id")) == [
        stored,
        None,
    ]


def test_a_webhook_id_with_a_nul_is_refused_not_folded_into_another(offline: Vessel) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    post_signed(raw, webhook_id="msg_ab")

    response = post_signed(raw, webhook_id="msg_a\x00b")

    # Refused at the site's door, like a NUL in any header (webui/web/nul_guard.py).
    error = assert_door_error(response, 400, "invalid")
    assert "Webhook-Id" in error["message"]
    assert "Idempotent-Replayed" not in response
    assert BrainCall.objects.count() == 1


@pytest.fixture
def door_socket(live_server: Any) -> Iterator[http.client.HTTPConnection]:
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    yield connection
    connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_over_a_real_socket_is_a_411_not_a_signature_error(
    door_socket: http.client.HTTPConnection, offline: Vessel
) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    signed = signed_headers(raw)
    headers = {
        "Content-Type": "application/json",
        "Connection": "close",
        "webhook-id": signed["HTTP_WEBHOOK_ID"],
        "webhook-timestamp": signed["HTTP_WEBHOOK_TIMESTAMP"],
        "webhook-signature": signed["HTTP_WEBHOOK_SIGNATURE"],
    }

    door_socket.request("POST", URL, body=iter([raw[:10], raw[10:]]), headers=headers)
    response = door_socket.getresponse()

    assert response.status == 411, response.read()
    error = json.loads(response.read())["error"]
    assert error["code"] == "length_required"
    assert BrainCall.objects.get().outcome == "length_required"
