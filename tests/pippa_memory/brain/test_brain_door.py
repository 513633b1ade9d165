"""The brain door: the engine borrows the household's vessels for judgement, behind Standard
Webhooks signatures, with fixed schemas, one repair, replays, audit rows and clear errors."""

import base64
import json
import time
from datetime import timedelta
from typing import Any

import pytest
import requests
import responses
from django.test import Client
from django.utils import timezone

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import BrainCall
from pippa_memory.pins.tombstones import record_tombstones
from provider_doubles import AnthropicKit
from tests.support.brain_door import (
    DECIDE,
    GOOD,
    NEW_SECRET,
    OLD_SECRET,
    URL,
    answer_with,
    call_door,
    signed_headers,
)
from webui.models import Soul, Vessel

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("door")]

CURATE = {
    "goal": "keep what matters for Sunday",
    "items": [{"id": "a", "text": "dinner at six"}, {"id": "b", "text": "the cat sneezed"}],
}
ASSEMBLE = {
    "purpose": "a brief for the morning",
    "facts": [{"id": "f1", "text": "bins on Tuesday"}, {"id": "f2", "text": "Ada's birthday"}],
    "budget_chars": 60,
}
INPUTS = {"decide": DECIDE, "curate": CURATE, "assemble": ASSEMBLE}


# -- happy paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["decide", "curate", "assemble"])
def test_each_role_answers_on_the_offline_vessel(offline: Vessel, role: str) -> None:
    response = call_door({"role": role, "soul": "pippa", "input": INPUTS[role]})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["role"] == role
    assert (body["vessel"], body["model"], body["repaired"]) == ("offline", "offline-1", False)
    assert set(body["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
    }
    assert body["request_id"] == response["X-Request-Id"]
    # Written out by hand, not taken from the role: what the offline vessel gives for each input.
    output = body["output"]
    if role == "decide":
        assert (output["choice"], output["confidence"]) == ("tea", 0.0)
        assert output["reason"].startswith("Synthetic:")
    if role == "curate":
        assert (output["keep"], output["drop"]) == (["a", "b"], [])
    if role == "assemble":
        assert output == {"block": "- bins on Tuesday\n- Ada's birthday", "used": ["f1", "f2"]}


@pytest.mark.parametrize(
    ("role", "answer"),
    [
        ("decide", {"choice": "coffee", "confidence": 0.8, "reason": "Guests asked for it."}),
        ("curate", {"keep": ["a"], "drop": ["b"], "notes": "The cat can wait."}),
        ("assemble", {"block": "Bins go out on Tuesday.", "used": ["f1"]}),
    ],
)
@responses.activate
def test_each_role_answers_on_a_provider_vessel_with_tools_off(
    claude: Vessel, role: str, answer: dict[str, Any]
) -> None:
    answer_with(responses, json.dumps(answer))

    response = call_door({"role": role, "soul": "pippa", "input": INPUTS[role], "vessel": "claude"})

    assert response.status_code == 200, response.content
    assert response.json()["output"] == answer
    sent = json.loads(responses.calls[0].request.body)
    assert "tools" not in sent
    assert sent["output_config"]["format"]["type"] == "json_schema"
    assert sent["output_config"]["format"]["schema"]["additionalProperties"] is False


@responses.activate
def test_a_failing_vessel_hands_over_to_the_next_by_priority(
    claude: Vessel, offline: Vessel
) -> None:
    kit = AnthropicKit()
    status, body, _ = kit.error("bad_request")
    kit.queue(responses, status, body)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200
    assert response.json()["vessel"] == "offline"


# -- signatures ---------------------------------------------------------------------------------


def test_missing_signature_headers_are_refused(offline: Vessel) -> None:
    response = Client().post(URL, b"{}", content_type="application/json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Webhook")
    assert "headers are required" in response.json()["error"]["message"]


def test_a_wrong_secret_is_refused(offline: Vessel) -> None:
    other = "whsec_" + base64.b64encode(b"x" * 32).decode()

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE}, secret=other)

    assert response.status_code == 401
    assert response.json()["error"]["message"] == "The signature does not match."


def test_one_byte_flipped_after_signing_is_refused(offline: Vessel) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    headers = signed_headers(raw)
    flipped = raw.replace(b"coffee", b"coffef")

    response = Client().post(URL, flipped, content_type="application/json", **headers)

    assert response.status_code == 401


@pytest.mark.parametrize("offset", [-400, 400], ids=["stale", "from-the-future"])
def test_timestamps_outside_five_minutes_are_refused(offline: Vessel, offset: int) -> None:
    response = call_door(
        {"role": "decide", "soul": "pippa", "input": DECIDE}, at=time.time() + offset
    )

    assert response.status_code == 401
    assert "five-minute tolerance" in response.json()["error"]["message"]


def test_the_older_of_two_rotated_secrets_is_accepted(offline: Vessel) -> None:
    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE}, secret=OLD_SECRET)

    assert response.status_code == 200


def test_a_malformed_signature_header_is_a_401_not_a_crash(offline: Vessel) -> None:
    raw = b'{"role": "decide"}'
    headers = signed_headers(raw)
    headers["HTTP_WEBHOOK_SIGNATURE"] = "garbage-without-a-comma"

    response = Client().post(URL, raw, content_type="application/json", **headers)

    assert response.status_code == 401
    assert "malformed" in response.json()["error"]["message"]


# -- the other errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"role": "judge", "soul": "pippa", "input": DECIDE}, "role"),
        ({"role": "decide", "soul": "pippa"}, "body"),
        (
            {"role": "decide", "soul": "pippa", "input": {**DECIDE, "options": ["tea"]}},
            "input.options",
        ),
        (
            {"role": "decide", "soul": "pippa", "input": {**DECIDE, "options": ["tea", "tea"]}},
            "input.options",
        ),
        ({"role": "curate", "soul": "pippa", "input": {"goal": "g", "items": []}}, "input.items"),
        (
            {"role": "assemble", "soul": "pippa", "input": {**ASSEMBLE, "budget_chars": 0}},
            "input.budget_chars",
        ),
        ({"role": "decide", "soul": "pippa", "input": DECIDE, "extra": 1}, "body"),
        ({"role": "decide", "soul": "pip\u0000pa", "input": DECIDE}, "soul"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    offline: Vessel, body: dict[str, Any], field: str
) -> None:
    response = call_door(body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["details"]


def test_an_unknown_soul_is_a_404_naming_it(offline: Vessel) -> None:
    response = call_door({"role": "decide", "soul": "nobody", "input": DECIDE})

    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"soul": "No soul 'nobody'."}


def test_a_body_that_is_not_json_is_a_400(offline: Vessel) -> None:
    response = call_door(None, raw=b'{"role": "decide",')

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_an_oversized_body_is_refused_before_parsing_or_any_vessel(
    configure: Any, offline: Vessel
) -> None:
    configure(BRAIN_MAX_BODY_BYTES=1000)
    body = {"role": "decide", "soul": "pippa", "input": {**DECIDE, "context": "x" * 2000}}

    response = call_door(body)

    assert response.status_code == 413
    call = BrainCall.objects.get()
    assert (call.outcome, call.role, call.vessel) == ("too_large", "", "")


def test_a_body_that_is_not_json_media_is_a_415(offline: Vessel) -> None:
    raw = b"role=decide"
    response = Client().post(URL, raw, content_type="text/plain", **signed_headers(raw))

    assert response.status_code == 415


def test_callers_over_the_rate_are_throttled_with_retry_after(
    configure: Any, offline: Vessel
) -> None:
    configure(BRAIN_RATE="2/min")
    body = {"role": "decide", "soul": "pippa", "input": DECIDE}

    statuses = [call_door(body).status_code for _ in range(2)]
    third = call_door(body)

    assert statuses == [200, 200]
    assert third.status_code == 429
    assert int(third["Retry-After"]) >= 1


def test_memory_off_is_a_503(configure: Any, offline: Vessel) -> None:
    configure(ENABLED=False)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert (response.status_code, response.json()["error"]["code"]) == (503, "memory_disabled")


def test_no_secret_is_a_503(configure: Any, offline: Vessel) -> None:
    configure(BRAIN_SECRET="")

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert (response.status_code, response.json()["error"]["code"]) == (503, "not_configured")


def test_no_eligible_vessel_is_a_503(db: None) -> None:
    Vessel.objects.create(slug="o", name="O", adapter="offline", brain_priority=None)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert (response.status_code, response.json()["error"]["code"]) == (503, "no_vessel")


@responses.activate
def test_a_vessel_failure_is_a_502(claude: Vessel) -> None:
    kit = AnthropicKit()
    status, body, _ = kit.error("auth_failed")
    kit.queue(responses, status, body)

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "vessel_failed"
    assert error["details"]["attempts"][0]["code"] == "auth_failed"
    assert "sk-ant-brain-SECRET" not in response.content.decode()


@responses.activate
def test_a_vessel_timeout_is_a_504(claude: Vessel) -> None:
    responses.add(responses.POST, AnthropicKit.url, body=requests.exceptions.ReadTimeout("slow"))

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert (response.status_code, response.json()["error"]["code"]) == (504, "vessel_timeout")


# -- wrong answers: one repair, then 502 ----------------------------------------------------------

WRONG_ANSWERS = {
    "extra keys": json.dumps({**GOOD, "mood": "happy"}),
    "missing fields": json.dumps({"choice": "tea"}),
    "wrong types": json.dumps({**GOOD, "confidence": "high"}),
    "truncated JSON": '{"choice": "tea", "confid',
    "prose": "I would pick tea, because everyone likes it.",
    "not one of the options": json.dumps({**GOOD, "choice": "lemonade"}),
    "confidence out of range": json.dumps({**GOOD, "confidence": 1.7}),
}


@pytest.mark.parametrize("wrong", list(WRONG_ANSWERS), ids=list(WRONG_ANSWERS))
@responses.activate
def test_a_wrong_answer_gets_one_repair(claude: Vessel, wrong: str) -> None:
    answer_with(responses, WRONG_ANSWERS[wrong], json.dumps(GOOD))

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 200, response.content
    assert response.json()["output"] == GOOD
    assert response.json()["repaired"] is True
    repair = json.loads(responses.calls[1].request.body)["messages"][0]["content"][0]["text"]
    assert "previous answer" in repair


@pytest.mark.parametrize("wrong", list(WRONG_ANSWERS), ids=list(WRONG_ANSWERS))
@responses.activate
def test_two_wrong_answers_are_a_502_saying_what_was_wrong(claude: Vessel, wrong: str) -> None:
    answer_with(responses, WRONG_ANSWERS[wrong], WRONG_ANSWERS[wrong])

    response = call_door({"role": "decide", "soul": "pippa", "input": DECIDE})

    assert response.status_code == 502
    assert response.json()["error"]["code"] == "schema_violation"
    assert len(responses.calls) == 2
    assert BrainCall.objects.get().outcome == "schema_violation"


# Hand-written provider answers that fit the output schema, each breaking one meaning rule of its
# role (for the inputs above), with the words the refusal must say.
BROKEN_RULES = {
    "decide confidence above 1": (
        "decide",
        {"choice": "tea", "confidence": 1.01, "reason": "Sure."},
        "confidence 1.01 is not between 0 and 1",
    ),
    "decide confidence below 0": (
        "decide",
        {"choice": "tea", "confidence": -0.1, "reason": "Sure."},
        "confidence -0.1 is not between 0 and 1",
    ),
    "decide blank reason": (
        "decide",
        {"choice": "tea", "confidence": 0.5, "reason": " \n"},
        "reason is empty",
    ),
    "curate unknown id": (
        "curate",
        {"keep": ["a", "z"], "drop": ["b"], "notes": ""},
        "unknown ids ['z']",
    ),
    "curate kept and dropped": (
        "curate",
        {"keep": ["a", "b"], "drop": ["b"], "notes": ""},
        "ids both kept and dropped ['b']",
    ),
    "curate item left out": (
        "curate",
        {"keep": ["a"], "drop": [], "notes": ""},
        "ids neither kept nor dropped ['b']",
    ),
    "curate id listed twice": (
        "curate",
        {"keep": ["a", "a"], "drop": ["b"], "notes": ""},
        "ids listed twice in keep ['a']",
    ),
    "assemble over budget": (
        "assemble",
        {"block": "x" * 61, "used": ["f1"]},
        "block is 61 characters, over the budget of 60",
    ),
    "assemble unknown fact": (
        "assemble",
        {"block": "Bins on Tuesday.", "used": ["f1", "f9"]},
        "used lists ids that are not among the facts ['f9']",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN_RULES), ids=list(BROKEN_RULES))
@responses.activate
def test_an_answer_that_breaks_a_meaning_rule_is_refused_naming_the_rule(
    claude: Vessel, case: str
) -> None:
    role, broken, words = BROKEN_RULES[case]
    answer_with(responses, json.dumps(broken), json.dumps(broken))

    response = call_door({"role": role, "soul": "pippa", "input": INPUTS[role]})

    assert response.status_code == 502, response.content
    error = response.json()["error"]
    assert error["code"] == "schema_violation"
    assert words in error["message"]
    assert len(responses.calls) == 2  # the one repair was asked for, and broke the rule again
    assert BrainCall.objects.get().outcome == "schema_violation"


@pytest.mark.parametrize(
    ("role", "answer"),
    [
        ("decide", {"choice": "coffee", "confidence": 1, "reason": "Certain."}),
        ("decide", {"choice": "tea", "confidence": 0, "reason": "A guess."}),
        ("curate", {"keep": [], "drop": ["b", "a"], "notes": ""}),
        ("assemble", {"block": "x" * 60, "used": []}),
        ("assemble", {"block": "", "used": ["f2", "f1"]}),
    ],
)
@responses.activate
def test_an_answer_at_the_edge_of_every_meaning_rule_is_accepted_as_given(
    claude: Vessel, role: str, answer: dict[str, Any]
) -> None:
    answer_with(responses, json.dumps(answer))

    response = call_door({"role": role, "soul": "pippa", "input": INPUTS[role]})

    assert response.status_code == 200, response.content
    assert response.json()["output"] == answer
    assert response.json()["repaired"] is False


# -- replays and audit -----------------------------------------------------------------------------


@responses.activate
def test_a_replayed_webhook_id_gets_the_stored_answer_without_running_again(claude: Vessel) -> None:
    answer_with(responses, json.dumps(GOOD))
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    headers = signed_headers(raw, webhook_id="msg_replay_1")

    first = Client().post(URL, raw, content_type="application/json", **headers)
    second = Client().post(URL, raw, content_type="application/json", **headers)

    assert len(responses.calls) == 1
    assert second.status_code == first.status_code == 200
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"


def test_a_replay_while_the_first_call_runs_is_a_409(offline: Vessel) -> None:
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    BrainCall.objects.create(
        request_id="r" * 32,
        webhook_id="msg_running",
        body_sha256=keyed_sha256(raw),
        outcome="running",
        lease_until=timezone.now() + timedelta(seconds=10),
    )

    response = Client().post(
        URL, raw, content_type="application/json", **signed_headers(raw, webhook_id="msg_running")
    )

    assert (response.status_code, response.json()["error"]["code"]) == (409, "in_progress")


def test_a_webhook_id_reused_with_another_body_is_a_422(offline: Vessel) -> None:
    call_door({"role": "decide", "soul": "pippa", "input": DECIDE}, webhook_id="msg_twice")

    response = call_door(
        {"role": "curate", "soul": "pippa", "input": CURATE}, webhook_id="msg_twice"
    )

    assert response.status_code == 422


def test_every_call_leaves_an_audit_row_and_never_a_secret(offline: Vessel, make_user: Any) -> None:
    call_door({"role": "decide", "soul": "pippa", "input": DECIDE})
    call_door({"role": "decide", "soul": "pippa", "input": DECIDE}, secret=NEW_SECRET[:-4] + "AAA=")
    Client().post(URL, b"{}", content_type="application/json")

    rows = list(BrainCall.objects.order_by("created_at", "id"))
    assert [r.outcome for r in rows] == ["answered", "unauthorized", "unauthorized"]
    assert rows[0].role == "decide"
    assert rows[0].soul == "pippa"
    assert rows[0].vessel == "offline"
    assert rows[0].latency_ms is not None
    dumped = json.dumps([list(BrainCall.objects.values())], default=str)
    assert NEW_SECRET not in dumped
    assert OLD_SECRET not in dumped
    assert NEW_SECRET.removeprefix("whsec_") not in dumped

    staff = Client()
    staff.force_login(make_user("root", is_staff=True, is_superuser=True))
    page = staff.get("/admin/pippa_memory/braincall/?outcome__exact=unauthorized")
    assert page.status_code == 200
    assert rows[1].request_id in page.content.decode()
    assert rows[0].request_id not in page.content.decode()


def test_the_openapi_document_and_swagger_ui_are_served_offline(user: Any) -> None:
    client = Client()
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_login(user)

    schema = client.get("/api/schema/?format=json").json()
    docs = client.get("/api/docs/").content.decode()

    assert "/api/memory/brain/" in schema["paths"]
    operation = schema["paths"]["/api/memory/brain/"]["post"]
    assert {p["name"] for p in operation["parameters"]} >= {
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
    assert "drf_spectacular_sidecar" in docs
    assert "cdn" not in docs.lower()


def test_a_secret_that_does_not_decode_is_a_system_check_error(configure: Any) -> None:
    from django.core import checks

    configure(BRAIN_SECRET=f"{NEW_SECRET} whsec_not*base64!")

    found = [m for m in checks.run_checks() if m.id == "pippa_memory.E004"]

    assert len(found) == 1
    assert "whsec_not" not in found[0].msg


def test_nul_characters_in_the_input_are_no_server_error(offline: Vessel) -> None:
    body = {
        "role": "decide",
        "soul": "pippa",
        "input": {"question": "q\u0000?", "options": ["a\u0000", "b"]},
    }

    response = call_door(body)

    assert response.status_code == 200
    assert BrainCall.objects.get().outcome == "answered"


# -- tombstones -------------------------------------------------------------------------------


def test_no_vessel_reads_an_item_tombstoned_here_whatever_the_engine_believes(
    offline: Vessel,
) -> None:
    soul = Soul.objects.get(slug="pippa")
    record_tombstones(soul=soul, item_ids={"f2"})  # a forget the engine never confirmed
    record_tombstones(soul=soul, item_ids={"f1"}, spared_viewer="7")  # made private by member 7

    for_bob = call_door({"role": "assemble", "soul": "pippa", "input": ASSEMBLE, "viewer": "8"})
    for_alice = call_door({"role": "assemble", "soul": "pippa", "input": ASSEMBLE, "viewer": "7"})
    about = {**DECIDE, "context": "Older: bins on Tuesday", "about": ["f1", "x9"]}
    decided = call_door({"role": "decide", "soul": "pippa", "input": about, "viewer": "8"})
    allowed = call_door({"role": "decide", "soul": "pippa", "input": about, "viewer": "7"})

    assert for_bob.status_code == for_alice.status_code == 200
    assert for_bob.json()["output"]["used"] == []  # both facts tombstoned for Bob
    assert for_alice.json()["output"]["used"] == ["f1"]  # her own private one, not the forgotten
    assert decided.status_code == 409, decided.content
    error = decided.json()["error"]
    assert (error["code"], error["details"]) == ("memory_gone", {"about": ["f1"]})
    assert allowed.status_code == 200, allowed.content
    rows = BrainCall.objects.filter(role="decide").order_by("created_at", "id")
    assert [row.outcome for row in rows] == [BrainCall.Outcome.INVALID, BrainCall.Outcome.ANSWERED]
