"""A member's own conversations: rename, delete (refused while a reply is written), search by title
and text, listed by day without temporary chats; never another member's, by page or API."""

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError
from django.db.models import QuerySet
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from webui.models import Conversation, Message, TurnRound
from webui.turns.lock import claim_turn, release_turn
from webui.turns.service import run_turn
from webui.web.conversations import delete_conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(make_user: Any) -> Any:
    return make_user("bob")


@pytest.fixture
def page_client(user: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def csrf_post(client: Client, url: str, data: dict[str, Any] | None = None) -> Any:
    client.get("/")
    token = client.cookies["csrftoken"].value
    return client.post(url, {**(data or {}), "csrfmiddlewaretoken": token})


def api_url(conversation: Conversation) -> str:
    return f"/api/conversations/{conversation.pk}/"


# Renaming


def test_patch_renames_the_conversation(auth_client: APIClient, conversation: Conversation) -> None:
    response = auth_client.patch(api_url(conversation), {"title": "  Tea plans  "}, format="json")

    assert response.status_code == 200
    assert response.json()["title"] == "Tea plans"
    conversation.refresh_from_db()
    assert conversation.title == "Tea plans"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"title": "   "}, "title", "A title cannot be empty."),
        ({"title": "x" * 201}, "title", "at most 200 characters; this one has 201"),
        ({"title": "tea\nplans"}, "title", "control characters"),
        ({"title": "tea\u202eplans"}, "title", "control characters"),
        ({"title": 7}, "title", "Must be a string of text."),
        ({}, "title", "required"),
        ({"title": "Fine", "temporary": True}, "temporary", "Only the title can be changed."),
    ],
)
def test_a_title_that_cannot_be_used_is_a_400_naming_it_and_changes_nothing(
    auth_client: APIClient, make_conversation: Any, body: dict, field: str, words: str
) -> None:
    conversation = make_conversation(title="Before")

    response = auth_client.patch(api_url(conversation), body, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert words in " ".join(error["details"][field])
    conversation.refresh_from_db()
    assert conversation.title == "Before"
    assert conversation.temporary is False


def test_an_emoji_with_a_joiner_is_a_fine_title(
    auth_client: APIClient, conversation: Conversation
) -> None:
    family = "Family \U0001f468\u200d\U0001f469\u200d\U0001f467"

    response = auth_client.patch(api_url(conversation), {"title": family}, format="json")

    assert response.status_code == 200
    assert response.json()["title"] == family


def test_the_rename_form_renames_and_a_blank_one_says_why(
    page_client: Client, conversation: Conversation
) -> None:
    url = f"/conversations/{conversation.pk}/rename/"

    assert csrf_post(page_client, url, {"title": "Garden"}).status_code == 302
    conversation.refresh_from_db()
    assert conversation.title == "Garden"

    response = csrf_post(page_client, url, {"title": "  "})
    page = page_client.get(response["Location"]).content.decode()
    assert "Not renamed: A title cannot be empty." in page
    conversation.refresh_from_db()
    assert conversation.title == "Garden"


# Deleting


def conversation_with_rows(make_conversation: Any) -> Conversation:
    conversation = make_conversation(title="To go")
    asked = Message.objects.create(conversation=conversation, role="user", content="hi")
    Message.objects.create(
        conversation=conversation, role="assistant", content="hello", reply_to=asked
    )
    pending = Message.objects.create(conversation=conversation, role="user", content="more")
    TurnRound.objects.create(user_message=pending, index=0, text="thinking")
    return conversation


def test_delete_removes_the_conversation_its_messages_and_kept_rounds(
    auth_client: APIClient, make_conversation: Any
) -> None:
    conversation = conversation_with_rows(make_conversation)
    kept = make_conversation(title="Stays")
    Message.objects.create(conversation=kept, role="user", content="still here")

    response = auth_client.delete(api_url(conversation))

    assert response.status_code == 204
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    assert not Message.objects.filter(conversation_id=conversation.pk).exists()
    assert not TurnRound.objects.exists()
    assert Message.objects.filter(conversation=kept).count() == 1


def test_delete_while_a_reply_is_written_is_a_409_and_deletes_nothing(
    auth_client: APIClient, make_conversation: Any
) -> None:
    conversation = conversation_with_rows(make_conversation)
    lock = claim_turn(conversation)

    response = auth_client.delete(api_url(conversation))

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "turn_in_progress"
    assert error["details"] == {"turn_id": lock.turn_id}
    assert Message.objects.filter(conversation=conversation).count() == 3
    release_turn(lock)
    assert auth_client.delete(api_url(conversation)).status_code == 204


def test_a_delete_that_fails_keeps_the_conversation_open_for_turns(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self: Any) -> None:
        raise DatabaseError("disk full")

    monkeypatch.setattr(QuerySet, "delete", fail)
    with pytest.raises(DatabaseError):
        delete_conversation(conversation=conversation)
    monkeypatch.undo()

    assert Conversation.objects.filter(pk=conversation.pk).exists()
    release_turn(claim_turn(conversation))  # free: a turn can claim it


def test_the_delete_page_asks_first_and_the_post_deletes(
    page_client: Client, make_conversation: Any
) -> None:
    conversation = conversation_with_rows(make_conversation)
    url = f"/conversations/{conversation.pk}/delete/"

    asking = page_client.get(url).content.decode()
    assert "Delete “To go”?" in asking
    assert "cannot be brought back" in asking
    assert Conversation.objects.filter(pk=conversation.pk).exists()

    response = csrf_post(page_client, url)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert "“To go” is deleted." in page_client.get("/").content.decode()
    assert not Conversation.objects.filter(pk=conversation.pk).exists()


def test_the_delete_page_says_the_memory_keeps_what_it_learned_when_a_memory_plugin_is_on(
    page_client: Client, conversation: Conversation, recording_tool: Any
) -> None:
    page = page_client.get(f"/conversations/{conversation.pk}/delete/").content.decode()

    assert "Deleting does not make Pippa forget" in page
    assert "forget it on the memory page" in page


def test_the_delete_page_while_a_reply_is_written_says_so_and_keeps_it(
    page_client: Client, conversation: Conversation
) -> None:
    claim_turn(conversation)

    response = csrf_post(page_client, f"/conversations/{conversation.pk}/delete/")

    page = page_client.get(response["Location"]).content.decode()
    assert "Not deleted: A reply is being written in this conversation" in page
    assert Conversation.objects.filter(pk=conversation.pk).exists()


# Another member's conversation, and staff


@pytest.mark.parametrize("is_staff", [False, True])
def test_no_one_renames_deletes_or_reads_another_members_conversation(
    make_user: Any, make_conversation: Any, is_staff: bool
) -> None:
    theirs = conversation_with_rows(make_conversation)
    intruder = make_user("mallory", is_staff=is_staff, is_superuser=is_staff)
    api = APIClient()
    api.force_login(intruder)
    page = Client()
    page.force_login(intruder)

    assert api.get(api_url(theirs)).status_code == 404
    assert api.patch(api_url(theirs), {"title": "mine"}, format="json").status_code == 404
    assert api.delete(api_url(theirs)).status_code == 404
    assert page.get(f"/conversations/{theirs.pk}/delete/").status_code == 404
    assert page.post(f"/conversations/{theirs.pk}/delete/").status_code == 404
    assert page.post(f"/conversations/{theirs.pk}/rename/", {"title": "mine"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "To go"
    assert Message.objects.filter(conversation=theirs).count() == 3


# Searching and listing


@pytest.fixture
def listed(make_conversation: Any, other: Any) -> dict[str, Conversation]:
    tea = make_conversation(title="Tea plans")
    garden = make_conversation(title="Garden")
    Message.objects.create(conversation=garden, role="assistant", content="Plant the TEA roses.")
    temporary = make_conversation(title="Secret tea", temporary=True)
    theirs = make_conversation(title="Bob's tea", viewer=other)
    return {"tea": tea, "garden": garden, "temporary": temporary, "theirs": theirs}


def titles(response: Any) -> list[str]:
    return [row["title"] for row in response.json()]


def test_search_finds_titles_and_message_text_ignoring_case_only_among_ones_own(
    auth_client: APIClient, listed: dict[str, Conversation]
) -> None:
    found = auth_client.get("/api/conversations/", {"q": "tea"})

    assert sorted(titles(found)) == ["Garden", "Tea plans"]
    assert titles(auth_client.get("/api/conversations/", {"q": "roses"})) == ["Garden"]
    assert titles(auth_client.get("/api/conversations/", {"q": "coffee"})) == []


def test_the_page_search_shows_what_it_found_and_never_another_members(
    page_client: Client, listed: dict[str, Conversation]
) -> None:
    page = page_client.get("/", {"q": "TEA"}).content.decode()

    assert "Tea plans" in page
    assert "Garden" in page
    assert "Bob&#x27;s tea" not in page
    assert "Secret tea" not in page
    assert (
        "No conversation of yours holds “coffee”."
        in page_client.get("/", {"q": "coffee"}).content.decode()
    )


def test_a_temporary_chat_is_not_listed_but_opens(
    auth_client: APIClient, page_client: Client, listed: dict[str, Conversation]
) -> None:
    assert "Secret tea" not in titles(auth_client.get("/api/conversations/"))
    assert "Secret tea" not in page_client.get("/").content.decode()
    assert page_client.get(listed["temporary"].get_absolute_url()).status_code == 200


def test_the_list_groups_conversations_by_the_day_they_were_last_active(
    page_client: Client, make_conversation: Any
) -> None:
    now = timezone.now()
    old = make_conversation(title="Long ago")
    Conversation.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=40))
    revived = make_conversation(title="Revived")
    Conversation.objects.filter(pk=revived.pk).update(created_at=now - timedelta(days=40))
    Message.objects.create(conversation=revived, role="user", content="back again")
    yesterday = make_conversation(title="Last night")
    Conversation.objects.filter(pk=yesterday.pk).update(created_at=now - timedelta(days=1))

    page = page_client.get("/").content.decode()

    day = timezone.localdate(now - timedelta(days=40))
    label = f"{day.day} {day:%B} {day.year}"
    assert page.index("<h2>Today</h2>") < page.index("Revived") < page.index("<h2>Yesterday</h2>")
    assert page.index("<h2>Yesterday</h2>") < page.index("Last night") < page.index(label)
    assert page.index(label) < page.index("Long ago")


# The conversation page


def test_a_temporary_chat_says_so_and_when_it_is_removed(
    page_client: Client, make_conversation: Any, settings: Any
) -> None:
    conversation = make_conversation(temporary=True)
    settings.WEBUI = {"PRUNE_TEMPORARY_DAYS": 2.0}

    page = page_client.get(conversation.get_absolute_url()).content.decode()

    assert "Temporary chat — not listed among your conversations" in page
    assert "once it has been quiet (no message) for 2 days" in page


def test_an_ordinary_chat_has_no_temporary_notice(
    page_client: Client, conversation: Conversation
) -> None:
    page = page_client.get(conversation.get_absolute_url()).content.decode()

    assert "Temporary chat" not in page


def test_the_first_turn_reply_carries_the_title_it_gave(
    auth_client: APIClient, conversation: Conversation
) -> None:
    url = f"/api/conversations/{conversation.pk}/messages/"

    body = auth_client.post(url, {"text": "Plans for  the\nweekend"}, format="json").json()

    assert body["conversation"] == {"id": str(conversation.pk), "title": "Plans for the weekend"}


HINT = "(try “remember I like tea”)"


def placeholder(client: Client, conversation: Conversation) -> str:
    page = client.get(conversation.get_absolute_url()).content.decode()
    start = page.index('placeholder="')
    return page[start : page.index('"', start + 13)]


def test_the_memory_hint_shows_only_where_the_memory_tool_is_on(
    page_client: Client, make_conversation: Any, recording_tool: Any, offline_vessel: Any
) -> None:
    assert HINT in placeholder(page_client, make_conversation())
    assert HINT not in placeholder(page_client, make_conversation(temporary=True))
    offline_vessel.memory_tool_enabled = False
    offline_vessel.save()
    assert HINT not in placeholder(page_client, make_conversation())


def test_after_the_first_turn_the_hint_follows_the_tools_it_fixed(
    page_client: Client, make_conversation: Any, recording_tool: Any
) -> None:
    offered = make_conversation()
    run_turn(conversation=offered, text="hello")
    not_offered = make_conversation(offered_tools=[])

    assert HINT in placeholder(page_client, offered)
    assert HINT not in placeholder(page_client, not_offered)


def test_without_a_memory_plugin_there_is_no_memory_hint(
    page_client: Client, conversation: Conversation
) -> None:
    assert HINT not in placeholder(page_client, conversation)


def test_the_composer_says_how_to_send_and_carries_the_limit(
    page_client: Client, conversation: Conversation, settings: Any
) -> None:
    settings.WEBUI = {"MAX_MESSAGE_CHARS": 1234}

    page = page_client.get(conversation.get_absolute_url()).content.decode()

    assert "Enter sends; Shift+Enter starts a new line." in page
    assert 'data-max-chars="1234"' in page


def test_a_search_too_long_is_a_400_naming_q(
    auth_client: APIClient, listed: dict[str, Conversation]
) -> None:
    response = auth_client.get("/api/conversations/", {"q": "t" * 201})

    assert response.status_code == 400
    assert response.json()["error"]["details"] == {
        "q": ["A search may be at most 200 characters; this has 201."]
    }


def test_a_search_with_a_nul_is_refused_as_a_400_naming_the_field(
    auth_client: APIClient, listed: dict[str, Conversation]
) -> None:
    response = auth_client.get("/api/conversations/", {"q": "tea\x00plans"})

    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"nul": ["the query string field 'q'"]}


def test_the_page_says_a_search_is_too_long(
    page_client: Client, listed: dict[str, Conversation]
) -> None:
    page = page_client.get("/", {"q": "t" * 201}).content.decode()

    assert "Ensure this value has at most 200 characters (it has 201)." in page
