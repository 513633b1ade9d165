"""The JSON API the chat page uses: shapes, errors that name their cause, CSRF, and ownership."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.support.clients import client_as, post_message
from tests.support.fakes import FailingAdapter
from webui.models import Conversation, Message, Soul, Vessel
from webui.vessels import registry

pytestmark = pytest.mark.django_db


def start(client: APIClient, **body: Any) -> Any:
    body.setdefault("soul", "pippa")
    body.setdefault("vessel", "offline")
    return client.post("/api/conversations/", body, format="json")


def test_creating_a_conversation_returns_it_with_its_id(
    auth_client: APIClient, soul: Soul, offline_vessel: Vessel, user: Any
) -> None:
    response = start(auth_client, title="Tea talk", temporary=True)

    assert response.status_code == 201
    body = response.json()
    conversation = Conversation.objects.get(pk=body["id"])
    assert body["soul"] == "pippa"
    assert body["vessel"] == "offline"
    assert body["title"] == "Tea talk"
    assert body["temporary"] is True
    assert body["kind"] == "chat"
    assert body["pinned_head"] is None
    assert conversation.viewer == user


def test_title_and_temporary_are_optional(
    auth_client: APIClient, soul: Soul, offline_vessel: Vessel
) -> None:
    response = start(auth_client)

    assert response.status_code == 201
    assert response.json()["temporary"] is False


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"soul": "nobody"}, "soul", "No soul with the slug 'nobody' exists."),
        ({"vessel": "nowhere"}, "vessel", "No vessel with the slug 'nowhere' exists."),
        ({"soul": None}, "soul", "This field may not be null."),
        ({"soul": "pip\u0000pa"}, "soul", "No soul with the slug 'pip\\x00pa' exists."),
        ({"vessel": 7}, "vessel", "No vessel with the slug 7 exists."),
        ({"temporary": "perhaps"}, "temporary", "Must be a valid boolean."),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    auth_client: APIClient,
    soul: Soul,
    offline_vessel: Vessel,
    body: dict[str, Any],
    field: str,
    words: str,
) -> None:
    response = start(auth_client, **body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"] == f"{field}: {words}"
    assert field in error["details"]
    assert not Conversation.objects.exists()


def test_a_switched_off_vessel_cannot_start_a_conversation(
    auth_client: APIClient, soul: Soul, offline_vessel: Vessel
) -> None:
    Vessel.objects.update(enabled=False)

    response = start(auth_client)

    assert response.status_code == 400
    assert response.json()["error"]["message"] == "vessel: The vessel 'offline' is switched off."


def test_sending_a_message_returns_both_rows(
    auth_client: APIClient, conversation: Conversation
) -> None:
    response = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": "hello"}, format="json"
    )

    assert response.status_code == 201
    body = response.json()
    assert body["user"]["role"] == "user"
    assert body["user"]["content"] == "hello"
    assert set(body["assistant"]) >= {"id", "role", "content", "tool_uses", "usage", "created_at"}
    assert body["assistant"]["content"] == "(offline) I heard: “hello”"
    assert body["assistant"]["usage"]["input_tokens"] > 0


def test_listing_messages_returns_them_in_order(
    auth_client: APIClient, conversation: Conversation
) -> None:
    url = f"/api/conversations/{conversation.id}/messages/"
    auth_client.post(url, {"text": "one"}, format="json")
    auth_client.post(url, {"text": "two"}, format="json")

    response = auth_client.get(url)

    assert response.status_code == 200
    assert [(m["role"], m["content"][:9]) for m in response.json()] == [
        ("user", "one"),
        ("assistant", "(offline)"),
        ("user", "two"),
        ("assistant", "(offline)"),
    ]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "text: This field is required."),
        ({"text": "   "}, "text: This field may not be blank."),
        ({"text": 12}, "text: Must be a string of text."),
        (
            {"text": "x" * 20001},
            "text: A message may be at most 20000 characters; this one has 20001.",
        ),
    ],
)
def test_a_bad_message_is_a_400_naming_text_and_saves_nothing(
    auth_client: APIClient, conversation: Conversation, body: dict[str, Any], words: str
) -> None:
    response = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/", body, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == words
    assert not Message.objects.exists()


def test_malformed_json_is_a_clear_400(auth_client: APIClient, conversation: Conversation) -> None:
    response = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/", "{nope", content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_a_vessel_failure_is_a_502_that_keeps_the_user_message(
    auth_client: APIClient, conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", FailingAdapter)

    response = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": "hello?"}, format="json"
    )

    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "overloaded"
    assert error["message"].startswith("Offline is busy right now.")
    assert error["details"]["retryable"] is True
    assert error["details"]["user_message"]["content"] == "hello?"
    assert Message.objects.get().content == "hello?"

    monkeypatch.undo()
    retried = auth_client.post(f"/api/conversations/{conversation.id}/retry/", {}, format="json")
    assert retried.status_code == 201
    assert retried.json()["user"]["id"] == error["details"]["user_message"]["id"]
    assert Message.objects.count() == 2


def test_another_members_conversation_is_not_found(
    conversation: Conversation, make_user: Any
) -> None:
    other = client_as(make_user("mallory"), APIClient)

    assert other.get(f"/api/conversations/{conversation.id}/messages/").status_code == 404
    assert post_message(other, conversation, "hi").status_code == 404
    assert not Message.objects.exists()


def test_the_api_needs_a_logged_in_member(conversation: Conversation) -> None:
    response = APIClient().get(f"/api/conversations/{conversation.id}/messages/")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_authenticated"


def test_unsafe_calls_need_the_csrf_token(conversation: Conversation, user: Any) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)

    response = post_message(client, conversation, "hi")

    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    assert not Message.objects.exists()


def test_listing_conversations_shows_only_the_viewers_own(
    auth_client: APIClient, make_conversation: Any, make_user: Any
) -> None:
    mine = make_conversation(title="mine")
    make_conversation(title="theirs", viewer=make_user("bob"))
    make_conversation(title="job", viewer=None, kind="job")

    response = auth_client.get("/api/conversations/")

    assert [c["id"] for c in response.json()] == [str(mine.id)]


def test_a_reply_says_which_message_it_answers_and_whether_it_was_stopped(
    auth_client: APIClient, conversation: Conversation
) -> None:
    body = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": "hello"}, format="json"
    ).json()

    assert body["assistant"]["answers"] == body["user"]["id"]
    assert body["assistant"]["stopped"] is False
    assert body["user"]["answers"] is None


def test_retry_answers_the_message_it_names(
    auth_client: APIClient, conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"/api/conversations/{conversation.id}"
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", FailingAdapter)
    failed = auth_client.post(f"{url}/messages/", {"text": "first"}, format="json").json()
    waiting = failed["error"]["details"]["user_message"]["id"]
    monkeypatch.undo()
    auth_client.post(f"{url}/messages/", {"text": "second"}, format="json")

    retried = auth_client.post(f"{url}/retry/", {"message": waiting}, format="json")

    assert retried.status_code == 201
    assert retried.json()["assistant"]["answers"] == waiting
    again = auth_client.post(f"{url}/retry/", {"message": waiting}, format="json")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_answered"
    assert Message.objects.filter(role="assistant").count() == 2


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"message": "not-an-id"}, "message: Must be a valid UUID."),
        (
            {"message": "6f1d2c1e-0000-4000-8000-000000000000"},
            "message: No message of yours with the id 6f1d2c1e-0000-4000-8000-000000000000 is "
            "in this conversation.",
        ),
    ],
)
def test_retry_naming_no_message_of_the_conversation_is_a_400(
    auth_client: APIClient, conversation: Conversation, body: dict[str, Any], words: str
) -> None:
    Message.objects.create(conversation=conversation, role="user", content="waiting")

    response = auth_client.post(f"/api/conversations/{conversation.id}/retry/", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["message"] == words
    assert not Message.objects.filter(role="assistant").exists()


def test_retry_cannot_name_a_reply(auth_client: APIClient, conversation: Conversation) -> None:
    url = f"/api/conversations/{conversation.id}"
    reply = auth_client.post(f"{url}/messages/", {"text": "hi"}, format="json").json()["assistant"]

    response = auth_client.post(f"{url}/retry/", {"message": reply["id"]}, format="json")

    assert response.status_code == 400
    assert Message.objects.count() == 2


def test_stopping_when_no_turn_runs_is_a_409_and_a_bad_id_a_400(
    auth_client: APIClient, conversation: Conversation
) -> None:
    url = f"/api/conversations/{conversation.id}/stop/"
    turn_id = "6f1d2c1e-0000-4000-8000-000000000000"

    none_running = auth_client.post(url, {"turn_id": turn_id}, format="json")
    bad = auth_client.post(url, {"turn_id": 7}, format="json")

    assert none_running.status_code == 409
    assert none_running.json()["error"]["code"] == "no_turn_running"
    assert none_running.json()["error"]["details"] == {"turn_id": turn_id}
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == "turn_id: Must be a valid UUID."
    conversation.refresh_from_db()
    assert conversation.turn_stop_requested is False
