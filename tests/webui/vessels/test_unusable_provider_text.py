"""A provider reply whose text or tool arguments hold a lone surrogate (``"\\ud800"``, valid JSON
that no database or request can hold) is a clear vessel error with its own code, never a 500:
the member's message is kept, the turn can be retried, and nothing of the reply is saved. Every
HTTP adapter, each with the provider's documented answer shape."""

import json
from typing import Any

import pytest
import responses
from rest_framework.test import APIClient

from provider_doubles import HTTP_KITS, Kit, kit_vessel
from webui.models import Conversation, Message, Soul

pytestmark = pytest.mark.django_db

LONE = "\ud800"


@pytest.fixture(params=HTTP_KITS, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


@pytest.fixture
def conversation(kit: Kit, soul: Soul, user: Any, monkeypatch: pytest.MonkeyPatch) -> Conversation:
    vessel = kit_vessel(kit, monkeypatch, max_retries=0)
    return Conversation.objects.create(soul=soul, vessel=vessel, viewer=user)


def queue_raw(kit: Kit, rsps: responses.RequestsMock, reply: dict[str, Any]) -> None:
    # json.dumps escapes the surrogate as \ud800: valid JSON, exactly what a provider could send.
    rsps.add(
        responses.POST,
        kit.url,
        body=json.dumps(reply),
        status=200,
        content_type="application/json",
    )


def post(client: APIClient, conversation: Conversation) -> Any:
    return client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": "hello"}, format="json"
    )


@pytest.mark.parametrize(
    "reply",
    ["text", "tool_arguments"],
)
def test_a_reply_with_a_lone_surrogate_is_a_named_vessel_error_not_a_500(
    kit: Kit,
    conversation: Conversation,
    auth_client: APIClient,
    rsps: responses.RequestsMock,
    reply: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if reply == "text":
        body = kit.text_body(f"Here you are {LONE}")
    else:
        call = {"id": "toolu_0001", "name": "memory", "input": {"verb": "recall", "text": LONE}}
        body = kit.call_body([call])
    queue_raw(kit, rsps, body)

    response = post(auth_client, conversation)

    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "unencodable_text"
    # The member reads family words; what was wrong, named, goes to the admin's log.
    assert "lone surrogate" in caplog.text
    assert ("its text" if reply == "text" else "tool call 0") in caplog.text
    assert error["details"]["user_message"]["content"] == "hello"
    assert list(Message.objects.values_list("role", flat=True)) == ["user"]


def test_an_error_body_with_a_lone_surrogate_is_reported_with_a_replacement_character(
    kit: Kit,
    conversation: Conversation,
    auth_client: APIClient,
    rsps: responses.RequestsMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    status, body, _ = kit.error("auth_failed")
    said = kit.error_message(body)
    text = json.dumps(body).replace(json.dumps(said)[1:-1], f"{said} \\ud800")
    rsps.add(responses.POST, kit.url, body=text, status=status, content_type="application/json")

    response = post(auth_client, conversation)

    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "auth_failed"
    assert "\ud800" not in response.content.decode()
    assert f"{said} \ufffd" in caplog.text  # the provider's words, as the admin's log keeps them
