"""Hostile bodies on the chat API and the pages: text that cannot be stored, nesting that would
exhaust the parser, bodies past the size cap. Each is a 4xx in the API's own error shape that
names the field where it can, and changes nothing."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.support.clients import client_as, granted
from webui.models import Conversation, Message, Soul

pytestmark = pytest.mark.django_db

SURROGATE = '"\\ud800"'  # valid JSON, but no Unicode scalar value: it cannot be UTF-8 encoded


def post_raw(
    client: APIClient, url: str, raw: bytes | str, content_type: str = "application/json"
) -> Any:
    return client.generic("POST", url, raw, content_type=content_type)


def messages_url(conversation: Conversation) -> str:
    return f"/api/conversations/{conversation.id}/messages/"


def assert_api_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"}
    return error


def test_a_lone_surrogate_in_a_message_is_a_400_naming_text_and_stores_nothing(
    auth_client: APIClient, conversation: Conversation
) -> None:
    response = post_raw(auth_client, messages_url(conversation), '{"text": ' + SURROGATE + "}")

    error = assert_api_error(response, 400)
    assert error["code"] == "invalid"
    assert "text" in error["details"]
    assert "Unicode" in error["message"]
    assert not Message.objects.exists()


def test_a_lone_surrogate_deep_inside_names_the_path_to_it(
    auth_client: APIClient, conversation: Conversation
) -> None:
    raw = '{"text": "hi", "extra": {"notes": [1, ' + SURROGATE + "]}}"

    response = post_raw(auth_client, messages_url(conversation), raw)

    error = assert_api_error(response, 400)
    assert "extra.notes.1" in error["details"]


def test_a_lone_surrogate_in_a_key_is_named_without_echoing_the_surrogate(
    auth_client: APIClient, conversation: Conversation
) -> None:
    raw = '{"text": "hi", "a\\ud800b": 1}'

    response = post_raw(auth_client, messages_url(conversation), raw)

    error = assert_api_error(response, 400)
    assert "a\\ud800b" in error["details"]
    response.content.decode("utf-8")  # the answer itself is valid UTF-8


@pytest.mark.parametrize("depth", [100, 50_000], ids=["past-the-limit", "past-the-parser"])
def test_deep_nesting_is_a_400_in_the_api_shape_not_a_recursion_error(
    auth_client: APIClient, conversation: Conversation, depth: int
) -> None:
    raw = '{"text": ' + "[" * depth + "]" * depth + "}"

    response = post_raw(auth_client, messages_url(conversation), raw)

    error = assert_api_error(response, 400)
    assert error["code"] == "parse_error"
    assert "nested" in error["message"]
    assert not Message.objects.exists()


def test_a_json_body_past_djangos_upload_cap_is_a_413_in_the_api_shape(
    auth_client: APIClient, conversation: Conversation, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = post_raw(auth_client, messages_url(conversation), '{"text": "%s"}' % ("a" * 2000))

    error = assert_api_error(response, 413)
    assert error["code"] == "too_large"
    assert "1000 bytes" in error["message"]
    assert not Message.objects.exists()


def test_waking_a_soul_named_by_something_other_than_an_id_is_a_form_error_not_a_500(
    make_user: Any, soul: Soul
) -> None:
    client = client_as(granted(make_user("root", is_staff=True), "add_unattendedrun"), APIClient)

    response = client.post("/stream/wake/", {"soul": "not-a-number"})

    assert response.status_code == 302
    follow = client.get(response["Location"])
    assert b"Choose a soul to wake" in follow.content


def test_a_conversation_id_that_is_no_uuid_is_a_404_in_the_api_shape(
    auth_client: APIClient,
) -> None:
    response = auth_client.get("/api/conversations/not-a-uuid/messages/")

    error = assert_api_error(response, 404)
    assert error["code"] == "not_found"


@pytest.mark.parametrize(
    "path",
    ["/api/conversations/%0A8S/retry/", "/api/no-such-route/", "/api/conversations/x%0Ay/"],
)
def test_any_api_path_no_route_matches_is_a_404_in_the_api_shape(
    auth_client: APIClient, path: str
) -> None:
    response = auth_client.post(path, {}, format="json")

    error = assert_api_error(response, 404)
    assert error["code"] == "not_found"


def test_nesting_up_to_the_limit_parses_and_one_level_more_is_refused() -> None:
    from webui.text.untrusted_json import MAX_JSON_DEPTH, UntrustedJSONError, parse_untrusted_json

    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    one_more = "[" + at_limit + "]"

    assert parse_untrusted_json(at_limit.encode()) is not None
    with pytest.raises(UntrustedJSONError, match=f"more than {MAX_JSON_DEPTH} levels"):
        parse_untrusted_json(one_more.encode())
