"""The brain door's limits in one process: calls that have not proved who they are count against
their address before any audit row is written (429 with Retry-After in the door's error shape), a
signed caller is never shut out by them, and a rate that cannot be read is reported by the checks."""

import json
from typing import Any

import pytest
from django.core import checks
from django.core.cache import cache
from django.test import Client

from pippa_memory.models import BrainCall
from tests.support.brain_door import DECIDE, NEW_SECRET, URL, signed_headers
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db

BODY = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()


@pytest.fixture(autouse=True)
def door(configure: Any, soul: Soul) -> None:
    cache.clear()
    configure(BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="1000/min", BRAIN_UNSIGNED_RATE="3/min")
    Vessel.objects.create(
        slug="offline", name="Offline", adapter="offline", model="offline-1", brain_priority=10
    )


def unsigned(address: str = "192.0.2.1", **headers: Any) -> Any:
    bad = {**signed_headers(BODY), "HTTP_WEBHOOK_SIGNATURE": "v1,bm90LWEtc2lnbmF0dXJl"}
    client = Client(REMOTE_ADDR=address)
    return client.post(URL, BODY, content_type="application/json", **bad, **headers)


def signed(address: str = "192.0.2.1") -> Any:
    client = Client(REMOTE_ADDR=address)
    return client.post(URL, BODY, content_type="application/json", **signed_headers(BODY))


def test_unsigned_calls_over_the_rate_get_a_429_and_write_no_audit_row() -> None:
    responses = [unsigned() for _ in range(5)]

    assert [r.status_code for r in responses] == [401, 401, 401, 429, 429]
    assert BrainCall.objects.count() == 3
    refused = responses[-1]
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json() == {
        "error": {
            "code": "throttled",
            "message": "Too many calls from this address that are not signed; slow down.",
            "details": {"retry_after": int(refused["Retry-After"])},
        }
    }


def test_every_refusal_before_the_signature_counts_against_the_address() -> None:
    client = Client(REMOTE_ADDR="192.0.2.1")
    too_large = client.post(URL, b"x", content_type="application/json", CONTENT_LENGTH="9999999")
    not_json = client.post(URL, b"role=decide", content_type="text/plain")
    statuses = [too_large.status_code, not_json.status_code, unsigned().status_code]

    assert statuses == [413, 415, 401]
    assert unsigned().status_code == 429
    assert BrainCall.objects.count() == 3


def test_a_signed_caller_is_answered_after_its_address_used_up_the_unsigned_rate() -> None:
    statuses = [unsigned().status_code for _ in range(4)]

    assert statuses[-1] == 429
    assert signed().status_code == 200


def test_each_address_has_its_own_unsigned_rate() -> None:
    statuses = [unsigned().status_code for _ in range(4)]

    assert statuses[-1] == 429
    assert unsigned(address="192.0.2.2").status_code == 401


def test_a_forged_x_forwarded_for_counts_against_the_real_address() -> None:
    statuses = [unsigned(HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(4)]

    assert statuses == [401, 401, 401, 429]


@pytest.mark.parametrize("name", ["BRAIN_RATE", "BRAIN_UNSIGNED_RATE"])
@pytest.mark.parametrize("rate", ["lots", "0/min", "10/fortnight", "-3/s"])
def test_a_rate_that_cannot_be_read_is_reported_by_the_checks(
    configure: Any, name: str, rate: str
) -> None:
    configure(**{name: rate})

    found = [m for m in checks.run_checks() if m.id == "pippa_memory.E005"]

    assert len(found) == 1
    assert f"PIPPA_MEMORY_{name}" in found[0].msg
    assert repr(rate) in found[0].msg
