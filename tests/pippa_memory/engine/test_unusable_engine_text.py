"""An engine answer whose text is not valid Unicode scalar values (a lone surrogate, ``"\\ud800"``,
which is valid JSON) is unusable, like an answer of the wrong shape: it is refused with a named
reason at the door, and the chat goes on exactly as it would with the engine absent. Over real
sockets, against the reference engine; the vessel is OpenAI's, mocked, so the request that would
carry the text is really encoded."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
import responses
from rest_framework.test import APIClient

from pippa_memory.engine.client import call_engine
from pippa_memory.models import PendingAsk, PinRecord
from provider_doubles import OpenAIKit, kit_vessel
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from webui.models import Conversation, Message, ScheduledJob, Soul, Vessel
from webui.turns.service import run_turn
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

REASON = "unencodable_text"


@pytest.fixture
def provider(memory_on: ReferenceEngine) -> Iterator[responses.RequestsMock]:
    """OpenAI mocked with its documented answers; the engine reached over its real socket."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add_passthru(memory_on.url)
        OpenAIKit().serve(rsps)
        yield rsps


@pytest.fixture
def chat(
    provider: responses.RequestsMock, soul: Soul, user: Any, monkeypatch: pytest.MonkeyPatch
) -> Conversation:
    vessel = kit_vessel(OpenAIKit(), monkeypatch)
    return Conversation.objects.create(soul=soul, vessel=vessel, viewer=user)


def send(client: APIClient, conversation: Conversation, text: str) -> Any:
    return client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": text}, format="json"
    )


def sent_bodies(provider: responses.RequestsMock) -> list[dict[str, Any]]:
    return [json.loads(call.request.body) for call in provider.calls]


def test_a_memory_with_a_lone_surrogate_leaves_the_first_turn_201_and_the_pin_absent(
    memory_on: ReferenceEngine,
    chat: Conversation,
    auth_client: APIClient,
    provider: responses.RequestsMock,
) -> None:
    # The durable engine cannot store a lone surrogate, so it hands one back in the head's block.
    memory_on.state.remember("pippa", "The tea is in the tin.")
    memory_on.set_fault("lone_surrogate", paths=["/v1/souls/pippa/head"], fields=["block"])

    first = send(auth_client, chat, "hello")
    second = send(auth_client, chat, "still there?")

    assert (first.status_code, second.status_code) == (201, 201)
    record = PinRecord.objects.get(conversation=chat)
    assert (record.outcome, record.reason) == ("absent", REASON)
    chat.refresh_from_db()
    assert chat.pinned_head is None
    assert first.json()["assistant"]["content"] == "Echo: hello"
    assert "<memory " not in sent_bodies(provider)[0]["messages"][0]["content"]


EVENT = {
    "type": "conversation.turn",
    "id": "evt-1",
    "occurred_at": "2026-12-02T09:30:00Z",
    "soul": "pippa",
    "conversation": {
        "id": "c1",
        "pinned_head": None,
        "viewer": None,
        "vessel": "offline",
        "kind": "job",
    },
    "message": {
        "id": "m1",
        "role": "assistant",
        "created_at": "2026-12-02T09:30:00Z",
        "content": "Noted.",
        "tool_uses": [],
    },
}
CALLS = {
    "block": ("GET", "/v1/souls/pippa/head", None, {}, "block"),
    "recall": ("POST", "/v1/recall", {"soul": "pippa", "query": "bins", "limit": 5}, {}, "text"),
    "answers": ("GET", "/v1/conversations/c1/answers", None, {}, "answer"),
    "brief": ("POST", "/v1/wakes/brief", {"soul": "pippa", "wake": {}}, {}, "brief"),
    "bundle": ("POST", "/v1/bundles", {"soul": "pippa", "job": {"id": "1"}}, {}, "bundle"),
    "event": ("POST", "/v1/events", EVENT, {"Idempotency-Key": "evt-1"}, "id"),
}


@pytest.mark.parametrize("route", list(CALLS))
def test_every_route_refuses_an_answer_with_a_lone_surrogate_by_name(
    memory_on: ReferenceEngine, route: str
) -> None:
    memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    memory_on.state.ask("pippa", "c1", "When do the bins go out?")
    method, path, body, headers, field = CALLS[route]
    memory_on.set_fault("lone_surrogate", paths=[path], fields=[field])

    answer = call_engine(method, path, body=body, headers=headers, budget=1.0)

    assert not answer.ok
    assert answer.reason == REASON
    assert "lone surrogate" in answer.detail
    assert answer.data is None


def test_a_recall_result_with_a_lone_surrogate_is_memory_unavailable_and_the_turn_goes_on(
    memory_on: ReferenceEngine, chat: Conversation, auth_client: APIClient
) -> None:
    assert send(auth_client, chat, "hello").status_code == 201  # pinned before the memory
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")
    memory_on.set_fault("lone_surrogate", paths=["/v1/recall"], fields=["text"])

    response = send(auth_client, chat, "recall spare key")

    assert response.status_code == 201
    (use,) = Message.objects.filter(role="assistant").last().tool_uses
    assert use["output"]["error"] == "memory_unavailable"
    assert use["output"]["reason"] == REASON
    assert "lone surrogate" in use["output"]["message"]
    assert response.json()["assistant"]["content"].startswith("Done: ")


def test_an_ask_answer_with_a_lone_surrogate_is_skipped_and_later_turns_keep_working(
    memory_on: ReferenceEngine,
    chat: Conversation,
    auth_client: APIClient,
    provider: responses.RequestsMock,
    configure: Any,
) -> None:
    configure(BREAKER_FAIL_MAX=10)
    asked = send(auth_client, chat, "ask where the tea is")
    assert asked.status_code == 201
    memory_on.state.remember("pippa", "The tea is in the tin.")
    memory_on.set_fault("lone_surrogate", paths=["/v1/conversations/"], fields=["answer"])

    later = [send(auth_client, chat, f"turn {n}").status_code for n in range(3)]

    assert later == [201, 201, 201]
    answer_fetches = [r for r in memory_on.received if r["path"].endswith("/answers")]
    assert len(answer_fetches) == 3
    # Skipped, not delivered: nothing rode the slot, nothing was acknowledged.
    assert not [r for r in memory_on.received if r["path"].endswith("/answers/ack")]
    assert PendingAsk.objects.get().answered_at is None
    assert "tea is in the tin" not in json.dumps(sent_bodies(provider))


def test_a_job_goes_ahead_without_a_bundle_with_a_lone_surrogate(
    memory_on: ReferenceEngine, job: ScheduledJob, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    memory_on.set_fault("lone_surrogate", paths=["/v1/bundles"], fields=["bundle"])

    run = run_job(job)

    assert run.outcome == "succeeded"
    assert run.memory == {"source": "none", "reason": REASON}
    assert "Bins go out" not in sent_requests[0]["system"]


def test_a_wake_goes_ahead_without_a_brief_with_a_lone_surrogate(
    memory_on: ReferenceEngine, soul: Soul, offline_vessel: Vessel, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    memory_on.set_fault("lone_surrogate", paths=["/v1/wakes/brief"], fields=["brief"])

    run = run_wake(soul=soul)

    assert run.outcome == "succeeded"
    assert run.memory == {"source": "none", "reason": REASON}
    assert "Bins go out" not in sent_requests[0]["system"]


BRAIN_SECRET = "whsec_ZGVtby1icmFpbi1kb29yLXNlY3JldC1ub3QtZm9yLXByb2R1Y3Rpb24="


@pytest.mark.parametrize("secret", [TOKEN, BRAIN_SECRET], ids=["token", "brain_secret"])
def test_engine_text_quoting_the_token_or_the_brain_secret_is_masked_in_the_tool_and_the_log(
    memory_on: ReferenceEngine,
    configure: Any,
    conversation: Conversation,
    caplog: pytest.LogCaptureFixture,
    secret: str,
) -> None:
    configure(BRAIN_SECRET=BRAIN_SECRET)
    # The schema's message quotes the value it refused: here, the secret.
    refused = {"match": secret, "items": [], "fallback": None}
    memory_on.set_fault("wrong_shape", paths=["/v1/recall"], body=refused)

    result = run_turn(conversation=conversation, text="recall the key")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output["reason"] == "wrong_shape"
    assert "at match (rule: " in output["message"]
    stored = json.dumps(list(Message.objects.values("content", "tool_uses")))
    assert "wrong_shape" in caplog.text
    for text in (output["message"], stored, caplog.text):
        assert secret not in text
