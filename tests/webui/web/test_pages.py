"""The pages household members use: behind login, forms with CSRF, and the vault shown if broken."""

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from tests.support.recording_tool import RecordingTool
from webui.models import Conversation, Soul, Vessel
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def page_client(user: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def may_change_vessels(user: Any) -> None:
    """Grant the household-wide permission the memory tool switch and Test connection need."""
    user.user_permissions.add(Permission.objects.get(codename="change_vessel"))


def csrf_post(client: Client, url: str, data: dict[str, Any]) -> Any:
    client.get(url if not url.endswith("memory-tool/") else "/vessels/")
    return client.post(url, {**data, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


@pytest.mark.parametrize("url", ["/", "/conversations/new/", "/vessels/"])
def test_pages_need_a_logged_in_member(url: str) -> None:
    response = Client().get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_admin_is_for_staff_only(user: Any) -> None:
    client = Client()
    client.force_login(user)

    response = client.get("/admin/")

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_logging_in_with_the_form_reaches_the_conversation_list(user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")

    response = client.post(
        "/accounts/login/",
        {
            "username": "alice",
            "password": "a-long-test-password-42",
            "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
        },
        follow=True,
    )

    assert response.redirect_chain[-1][0] == "/"
    assert b"Conversations" in response.content


def test_starting_a_conversation_from_the_form(
    page_client: Client, soul: Soul, offline_vessel: Vessel, user: Any
) -> None:
    response = csrf_post(
        page_client,
        "/conversations/new/",
        {"soul": soul.pk, "vessel": offline_vessel.pk, "title": "", "temporary": "on"},
    )

    conversation = Conversation.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/conversations/{conversation.id}/"
    assert conversation.viewer == user
    assert conversation.temporary is True


def test_the_form_without_a_csrf_token_is_refused(
    page_client: Client, soul: Soul, offline_vessel: Vessel
) -> None:
    response = page_client.post(
        "/conversations/new/", {"soul": soul.pk, "vessel": offline_vessel.pk}
    )

    assert response.status_code == 403
    assert not Conversation.objects.exists()


def test_the_chat_page_shows_history_with_tool_uses(
    page_client: Client, conversation: Conversation, extension: Any
) -> None:
    extension(RecordingTool())
    run_turn(conversation=conversation, text="remember I like tea")

    response = page_client.get(f"/conversations/{conversation.id}/")

    assert response.status_code == 200
    history = response.context["history"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["tool_uses"][0]["input"] == {"verb": "remember", "text": "I like tea"}
    assert b'id="history"' in response.content
    assert b"webui/chat.js" in response.content
    assert b"webui/tool_uses.js" in response.content


def test_the_chat_page_says_when_the_vault_cannot_be_read(
    page_client: Client, conversation: Conversation, tmp_path: Any
) -> None:
    Soul.objects.update(vault_path=str(tmp_path / "missing"))

    response = page_client.get(f"/conversations/{conversation.id}/")

    assert response.status_code == 200
    assert "Pippa's vault cannot be read: The vault folder" in response.content.decode()


def test_the_chat_page_of_another_member_is_not_found(
    conversation: Conversation, make_user: Any
) -> None:
    client = Client()
    client.force_login(make_user("mallory"))

    assert client.get(f"/conversations/{conversation.id}/").status_code == 404


def test_a_member_who_may_change_vessels_flips_the_memory_tool(
    page_client: Client, user: Any, offline_vessel: Vessel, recording_tool: Any
) -> None:
    may_change_vessels(user)
    page = page_client.get("/vessels/").content.decode()
    assert "Offline" in page
    assert "Turn off" in page

    response = csrf_post(page_client, f"/vessels/{offline_vessel.slug}/memory-tool/", {})

    assert response.status_code == 302
    offline_vessel.refresh_from_db()
    assert offline_vessel.memory_tool_enabled is False
    followed = page_client.get("/vessels/").content.decode()
    assert "Turn on" in followed
    assert "conversations started from now on" in followed


def test_the_conversation_list_shows_the_members_conversations(
    page_client: Client, make_conversation: Any, make_user: Any
) -> None:
    make_conversation(title="Tea talk")
    make_conversation(title="Not mine", viewer=make_user("bob"))

    page = page_client.get("/").content.decode()

    assert "Tea talk" in page
    assert "Not mine" not in page


def test_without_a_memory_plugin_the_switches_are_disabled_and_say_why(
    page_client: Client, user: Any, offline_vessel: Vessel
) -> None:
    may_change_vessels(user)
    page = page_client.get("/vessels/").content.decode()

    assert "No memory plug-in is installed" in page
    assert "disabled>Turn off" in page
    response = csrf_post(page_client, f"/vessels/{offline_vessel.slug}/memory-tool/", {})
    offline_vessel.refresh_from_db()
    assert offline_vessel.memory_tool_enabled is True
    assert "The switch was not changed" in page_client.get("/vessels/").content.decode()
    assert response.status_code == 302
