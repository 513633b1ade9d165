""" "Pippa's memory in this chat" tells the truth, state by state (issue 38): a heading that says
when the memory was taken ("when this chat began", "when you brought it up to date at 17:40"),
at most one sentence more and never the same one twice, each item marked private or household,
times in one format and in the member's own time zone, a chat with no memory said so without a
date, "Bring up to date" offered only when something newer came and the engine answered, and an
``ask``'s answer that waits for the next reply said so. Whole turns on the offline vessel, the
reference engine over a socket."""

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, chat_memory_url, said_in_chat
from tests.support.memory_turns import started
from webui.models import Conversation, MemberSettings
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

SHARED = "The boiler code is 4471."
MINE = "Alice hides the biscuits."
LATER = "The bins go out on Tuesday."
#: Fourteen hours ahead of UTC: a time shown in the household's zone (UTC) reads otherwise.
KIRITIMATI = "Pacific/Kiritimati"
CLOCK = re.compile(r"\d{1,2}:\d{2}")


def words_of(body: dict[str, Any]) -> list[str]:
    """Every sentence the panel shows, in order."""
    return [body[key] for key in ("heading", "summary", "newer_text", "answer") if body[key]]


@pytest.fixture
def chat(memory_on: ReferenceEngine, user: Any, make_conversation: Any) -> Conversation:
    add_memory(memory_on, SHARED)
    add_memory(memory_on, MINE, scope="private", by=user, source=said_in_chat())
    conversation = make_conversation()
    return started(conversation)


def test_a_pinned_chat_says_when_it_began_and_marks_each_memory_private_or_household(
    chat: Conversation, user: Any
) -> None:
    body = api_as(user).get(chat_memory_url(chat)).json()

    assert body["heading"] == "What Pippa knew when this chat began"
    assert body["summary"] == ""
    scopes = {item["text"]: item["scope_words"] for item in body["items"]}
    assert scopes == {SHARED: "Household", MINE: "Private to you"}
    assert body["newer_text"] == "Nothing new since: this chat is up to date."
    assert (body["line"], body["can_refresh"]) == ("up to date", False)


def test_bring_up_to_date_is_offered_only_when_something_newer_came(
    chat: Conversation, user: Any, memory_on: ReferenceEngine
) -> None:
    client = api_as(user)
    assert client.get(chat_memory_url(chat)).json()["can_refresh"] is False

    add_memory(memory_on, LATER, by=user, source=said_in_chat())
    body = client.get(chat_memory_url(chat)).json()

    assert (body["newer"], body["can_refresh"], body["line"]) == (1, True, "1 new since")
    assert body["newer_text"] == "1 memory came since; Pippa does not know it in this chat yet."


def test_after_bringing_it_up_to_date_one_sentence_shows_and_then_the_heading_says_when(
    chat: Conversation, user: Any, memory_on: ReferenceEngine
) -> None:
    MemberSettings.objects.create(user=user, time_zone=KIRITIMATI)
    add_memory(memory_on, LATER, by=user, source=said_in_chat())
    client = api_as(user)

    refreshed = client.post(chat_memory_url(chat, refresh=True)).json()

    assert refreshed["state"] == "waiting"
    assert refreshed["heading"] == "Pippa takes her memory afresh at your next message"
    shown = words_of(refreshed)
    assert len(shown) == len(set(shown)), shown
    assert refreshed["can_refresh"] is False

    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="and now?")
    chat.refresh_from_db()
    body = client.get(chat_memory_url(chat)).json()

    taken = chat.pinned_at.astimezone(ZoneInfo(KIRITIMATI))
    assert body["heading"] == (
        f"What Pippa knew when you brought it up to date at {taken:%H:%M}"
    ), "the time is in the member's own zone, one format"
    assert LATER in [item["text"] for item in body["items"]]
    assert (body["line"], body["can_refresh"]) == ("up to date", False)


def test_the_heading_reads_the_time_in_the_household_zone_for_a_member_who_chose_none(
    chat: Conversation, user: Any, memory_on: ReferenceEngine, settings: Any
) -> None:
    settings.TIME_ZONE = "Europe/London"
    add_memory(memory_on, LATER, by=user, source=said_in_chat())
    client = api_as(user)
    client.post(chat_memory_url(chat, refresh=True))
    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="and now?")
    chat.refresh_from_db()

    heading = client.get(chat_memory_url(chat)).json()["heading"]

    taken: datetime = chat.pinned_at.astimezone(ZoneInfo("Europe/London"))
    assert heading.endswith(f"at {taken:%H:%M}")


def test_a_chat_that_took_no_memory_says_so_without_a_date(
    unreached_chat: Conversation, user: Any
) -> None:
    conversation = unreached_chat

    body = api_as(user).get(chat_memory_url(conversation)).json()

    assert body["heading"] == "Pippa brought no memory into this chat"
    for sentence in [*words_of(body), body["line"]]:
        assert not CLOCK.search(sentence), sentence
    assert body["line"] == "none"
    page = api_as(user).get(f"/conversations/{conversation.pk}/").content.decode()
    line = re.search(r'id="memory-panel-line">([^<]*)<', page).group(1)
    assert line == " · none", "the page as first drawn gives no date either"


def test_an_answer_waiting_for_the_next_reply_is_said_and_goes_once_it_rode(
    chat: Conversation, user: Any
) -> None:
    client = api_as(user)
    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="ask where is the key")

    body = client.get(chat_memory_url(chat)).json()

    assert body["answer"] == "An answer to your question is ready: send any message to hear it."
    assert body["line"] == "answer ready"

    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="tell me")
    after = client.get(chat_memory_url(chat)).json()
    assert after["answer"] == ""
    assert after["line"] == "up to date"


def test_a_temporary_chat_offers_nothing_and_names_no_time(
    memory_on: ReferenceEngine, make_conversation: Any, user: Any
) -> None:
    body = api_as(user).get(chat_memory_url(make_conversation(temporary=True))).json()

    assert (body["line"], body["can_refresh"], body["answer"]) == ("none (temporary)", False, "")
    for sentence in words_of(body):
        assert not CLOCK.search(sentence), sentence
