"""The brain door says which vessel judged, and whether it judged at all: a named vessel is the one
used (its failure is the door's failure), an unknown or ineligible name is refused, the attempts
that failed before an answer are in the reply and every attempt is on the audit row with its usage,
and an answer from a vessel that does not reason is marked synthetic."""

import json
from typing import Any

import pytest
import requests
import responses
from django.test import Client

from pippa_memory.models import BrainCall
from provider_doubles import AnthropicKit
from tests.support.brain_door import DECIDE, GOOD, answer_with, call_door
from webui.models import Vessel
from webui.vessels.registry import ADAPTER_CLASSES, build_adapter

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("door")]

# What one Anthropic answer from the kit costs, in the host's usage shape.
KIT_USAGE = {
    "input_tokens": 1200,
    "output_tokens": 17,
    "cached_input_tokens": 1024,
    "cache_write_tokens": 100,
}
PROSE = "I would pick tea, because everyone likes it."


def twice(usage: dict[str, int]) -> dict[str, int]:
    return {key: value * 2 for key, value in usage.items()}


def fail_with(rsps: Any, kind: str) -> None:
    kit = AnthropicKit()
    status, body, headers = kit.error(kind)
    kit.queue(rsps, status, body, **headers)


# -- a named vessel is the one used -----------------------------------------------------------------


@responses.activate
def test_a_named_vessel_that_answers_non_json_twice_is_the_doors_502_not_the_offline_output(
    claude: Vessel,
    offline: Vessel,
) -> None:
    answer_with(responses, PROSE, PROSE)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "claude"})

    assert response.status_code == 502, response.content
    error = response.json()["error"]
    assert error["code"] == "schema_violation"
    [attempt] = error["details"]["attempts"]
    assert attempt["vessel"] == "claude"
    assert attempt["model"] == "claude-sonnet-4-5"
    assert attempt["outcome"] == "failed"
    assert attempt["code"] == "schema_violation"
    assert attempt["usage"] == twice(KIT_USAGE)
    call = BrainCall.objects.get()
    assert (call.outcome, call.vessel, call.status_code) == ("schema_violation", "claude", 502)
    assert call.attempts == error["details"]["attempts"]


@responses.activate
def test_a_named_vessel_that_the_provider_refuses_is_not_replaced(
    claude: Vessel, offline: Vessel
) -> None:
    fail_with(responses, "auth_failed")

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "claude"})

    assert response.status_code == 502, response.content
    error = response.json()["error"]
    assert error["code"] == "vessel_failed"
    assert [(a["vessel"], a["code"]) for a in error["details"]["attempts"]] == [
        ("claude", "auth_failed")
    ]
    assert len(responses.calls) == 1


@responses.activate
def test_a_named_vessel_that_times_out_is_a_504_even_when_another_could_answer(
    claude: Vessel, offline: Vessel
) -> None:
    responses.add(responses.POST, AnthropicKit.url, body=requests.exceptions.ReadTimeout("slow"))

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "claude"})

    assert response.status_code == 504, response.content
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("vessel_timeout", "The vessel claude timed out.")
    assert [a["code"] for a in error["details"]["attempts"]] == ["timeout"]


@responses.activate
def test_a_named_vessel_that_answers_is_used_even_when_another_comes_first(
    claude: Vessel, offline: Vessel
) -> None:
    offline.brain_priority = 1
    offline.save()
    answer_with(responses, json.dumps(GOOD))

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "claude"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["vessel"], body["output"], body["attempts"]) == ("claude", GOOD, [])
    assert body["synthetic"] is False


def test_an_unknown_vessel_is_a_404_naming_it(offline: Vessel) -> None:
    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "nowhere"})

    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "unknown_vessel"
    assert error["details"] == {"vessel": "No vessel 'nowhere'."}
    call = BrainCall.objects.get()
    assert (call.outcome, call.vessel, call.attempts) == ("invalid", "", [])


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"brain_priority": None}, "has no brain priority"),
        ({"enabled": False}, "is switched off"),
    ],
    ids=["no-brain-priority", "switched-off"],
)
def test_an_ineligible_vessel_is_a_409_saying_why(
    offline: Vessel, change: dict[str, Any], why: str
) -> None:
    Vessel.objects.create(
        slug="idle", name="Idle", adapter="offline", **{"brain_priority": 3, **change}
    )

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "idle"})

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "ineligible_vessel"
    assert why in error["details"]["vessel"]
    assert BrainCall.objects.get().outcome == "invalid"


# -- no vessel named: every attempt is told --------------------------------------------------------


@responses.activate
def test_without_a_named_vessel_the_reply_lists_the_attempts_that_failed_first(
    claude: Vessel, offline: Vessel
) -> None:
    fail_with(responses, "bad_request")

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["vessel"] == "offline"
    [failed] = body["attempts"]
    assert (failed["vessel"], failed["model"], failed["outcome"]) == (
        "claude",
        "claude-sonnet-4-5",
        "failed",
    )
    assert failed["code"] == "bad_request"
    assert "Anthropic says bad_request" in failed["message"]


@responses.activate
def test_the_audit_row_keeps_every_attempt_with_its_usage(claude: Vessel, offline: Vessel) -> None:
    wrong = json.dumps({**GOOD, "choice": "lemonade"})
    answer_with(responses, wrong, wrong)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200, response.content
    body = response.json()
    call = BrainCall.objects.get()
    first, second = call.attempts
    assert (first["vessel"], first["outcome"], first["code"]) == (
        "claude",
        "failed",
        "schema_violation",
    )
    assert first["usage"] == twice(KIT_USAGE)
    assert (second["vessel"], second["model"], second["outcome"]) == (
        "offline",
        "offline-1",
        "answered",
    )
    assert second["usage"] == body["usage"]
    assert second["usage"]["input_tokens"] > 0
    assert body["attempts"] == [first]


# -- an answer from a vessel that does not reason says so ------------------------------------------


def test_an_answer_from_the_offline_vessel_is_marked_synthetic(offline: Vessel) -> None:
    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["synthetic"] is True
    assert body["output"]["confidence"] == 0
    assert "does not reason" in body["output"]["reason"]
    assert body["attempts"] == []
    assert BrainCall.objects.get().attempts[0]["synthetic"] is True


@responses.activate
def test_an_answer_from_a_provider_vessel_is_not_marked_synthetic(claude: Vessel) -> None:
    answer_with(responses, json.dumps(GOOD))

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200, response.content
    assert response.json()["synthetic"] is False


@pytest.mark.parametrize("adapter", sorted(ADAPTER_CLASSES))
def test_only_the_offline_adapter_declares_that_it_does_not_reason(adapter: str) -> None:
    instance = build_adapter(Vessel(slug="v", name="V", adapter=adapter))

    assert instance.reasons is (adapter != "offline")


def test_the_openapi_document_promises_attempts_synthetic_and_the_vessel_refusals(
    user: Any,
) -> None:
    client = Client()
    client.force_login(user)

    operation = client.get("/api/schema/?format=json").json()["paths"]["/api/memory/brain/"]
    responses_ = operation["post"]["responses"]

    reply = responses_["200"]["content"]["application/json"]["schema"]
    assert {"attempts", "synthetic"} <= set(reply["required"])
    assert reply["properties"]["synthetic"]["type"] == "boolean"
    assert "unknown_vessel" in responses_["404"]["description"]
    assert "ineligible_vessel" in responses_["409"]["description"]


@responses.activate
def test_a_nul_in_a_providers_error_is_dropped_from_the_audit_rows_attempts(
    claude: Vessel,
) -> None:
    AnthropicKit().queue(
        responses,
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": "bad\u0000input"}},
    )

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE, "vessel": "claude"})

    assert response.status_code == 502, response.content
    [attempt] = BrainCall.objects.get().attempts
    assert attempt["message"].endswith("badinput")
