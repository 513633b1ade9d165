"""A NUL wherever a member can type (query strings, form fields, headers, JSON bodies) is a 400
in the site's shape on SQLite and PostgreSQL alike, never a 500, and changes nothing."""

from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from tests.support.clients import post_message
from webui.models import Conversation, Message

pytestmark = pytest.mark.django_db


def plain_routes(resolver: URLResolver | None = None, prefix: str = "") -> list[str]:
    """Every route of the site that takes no argument, as a path (the admin's left out: staff
    pages have their own walk)."""
    paths = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if "<" in route or "(" in route or route.startswith("admin/"):
            continue
        if isinstance(entry, URLResolver):
            paths.extend(plain_routes(entry, route))
        elif isinstance(entry, URLPattern):
            paths.append("/" + route.lstrip("^").rstrip("$"))
    return paths


def assert_site_shaped_400(response: Any, path: str) -> None:
    assert response.status_code == 400, (path, response.status_code, response.content[:300])
    if path.startswith("/api/"):
        assert response["Content-Type"] == "application/json"
        error = response.json()["error"]
        assert set(error) == {"code", "message", "details"}
        assert error["code"] == "invalid"
        assert "NUL" in error["message"]
    else:
        assert response["Content-Type"].startswith("text/html")
        assert b"NUL character is not allowed" in response.content


def test_a_nul_in_any_routes_query_string_is_a_400_in_the_sites_shape(
    auth_client: APIClient,
) -> None:
    routes = plain_routes()
    # The walk reached the site's pages and its API.
    assert "/api/conversations/" in routes
    assert "/" in routes
    for path in routes:
        for query in ("q=a%00b", "soul=pi%00ppa", "x%00=1"):
            assert_site_shaped_400(auth_client.get(f"{path}?{query}"), path)


def test_a_nul_in_a_conversation_routes_query_string_is_a_400(
    auth_client: APIClient, conversation: Conversation
) -> None:
    for path in (
        f"/conversations/{conversation.id}/",
        f"/api/conversations/{conversation.id}/",
        f"/api/conversations/{conversation.id}/messages/",
    ):
        assert_site_shaped_400(auth_client.get(f"{path}?soul=%00"), path)


def test_a_nul_in_a_form_field_is_a_400_and_renames_nothing(
    auth_client: APIClient, conversation: Conversation
) -> None:
    conversation.title = "Before"
    conversation.save()
    path = f"/conversations/{conversation.id}/rename/"

    response = auth_client.post(path, {"title": "After\x00"}, format="multipart")

    assert_site_shaped_400(response, path)
    conversation.refresh_from_db()
    assert conversation.title == "Before"


def test_a_nul_in_a_form_field_of_a_new_conversation_is_a_400_and_starts_nothing(
    auth_client: APIClient, soul: Any, offline_vessel: Any
) -> None:
    response = auth_client.post(
        "/conversations/new/",
        {"soul": f"{soul.pk}\x00", "vessel": offline_vessel.pk},
        format="multipart",
    )

    assert_site_shaped_400(response, "/conversations/new/")
    assert not Conversation.objects.exists()


def test_a_nul_in_a_header_is_a_400(auth_client: APIClient) -> None:
    for path in ("/", "/api/conversations/"):
        assert_site_shaped_400(auth_client.get(path, HTTP_X_SOMETHING="a\x00b"), path)


def test_a_nul_in_a_json_body_is_a_400_naming_the_field_and_stores_nothing(
    auth_client: APIClient, conversation: Conversation
) -> None:
    response = post_message(auth_client, conversation, "a\x00b")

    assert response.status_code == 400
    assert "text" in response.json()["error"]["details"]
    assert not Message.objects.exists()


def test_an_unknown_conversation_is_a_404_in_the_apis_error_shape_not_drfs_detail(
    auth_client: APIClient,
) -> None:
    unknown = "00000000-0000-0000-0000-000000000000"
    for method in ("get", "patch", "delete"):
        response = getattr(auth_client, method)(f"/api/conversations/{unknown}/", format="json")
        assert response.status_code == 404
        assert response.json() == {
            "error": {"code": "not_found", "message": "Not found.", "details": {}}
        }


def test_the_schema_says_a_rename_requires_its_title(auth_client: APIClient) -> None:
    schema = auth_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    patch = schema["paths"]["/api/conversations/{conversation_id}/"]["patch"]
    ref = patch["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]

    assert component["required"] == ["title"]


def test_a_lone_surrogate_in_an_api_query_string_is_a_400_in_the_apis_shape(
    auth_client: APIClient, conversation: Conversation
) -> None:
    # "\ud800" percent-encoded: no UTF-8 text holds it, and Django would read it as U+FFFD.
    path = f"/api/conversations/{conversation.id}/messages/"

    response = auth_client.get(f"{path}?soul=a%ED%A0%80b")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "not UTF-8" in error["message"]
    assert error["details"] == {"not_utf8": ["the query string field 'soul'"]}
