"""The memory page, ``/memory/``: linked in the navigation for every member; per soul the items
the member may see with who said it, when, the scope and the link to their own turn; search;
forget through a confirmation that says what forgetting does and does not remove; scope; the
default-scope preference; counts for a manager; and an honest notice when memory is unavailable."""

from html import unescape
from typing import Any

import pytest

from pippa_memory.models import MemberPreference
from reference_engine.server import ReferenceEngine
from tests.support.clients import page_as
from tests.support.household_memory import (
    add_memory,
    grant_manage_memory,
    head,
    memory_page,
    said_in_chat,
    said_in_own_chat,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def household(memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any) -> dict[str, str]:
    return {
        "alice_private": add_memory(
            memory_on, "Alice hides the biscuits.", scope="private", by=user, source=said_in_chat()
        ),
        "bob_private": add_memory(
            memory_on, "Bob is planning a surprise.", scope="private", by=bob
        ),
        "bob_household": add_memory(memory_on, "The boiler code is 4471.", by=bob),
    }


def test_every_page_links_to_the_memory_page_for_a_member(user: Any) -> None:
    html = page_as(user).get("/").content.decode()

    assert '<a href="/memory/">Memory</a>' in html


def test_a_member_sees_their_own_and_household_items_with_who_when_and_scope(
    household: dict[str, str], user: Any
) -> None:
    html = memory_page(user)

    assert "Alice hides the biscuits." in html
    assert "The boiler code is 4471." in html
    assert "surprise" not in html
    assert "You said it" in html
    assert "Bob said it" in html
    assert "Private to you" in html
    assert "<time datetime=" in html
    assert html.index("boiler") < html.index("biscuits")  # newest first


def test_an_item_links_to_the_turn_of_the_members_own_conversation(
    memory_on: ReferenceEngine, soul: Any, user: Any, make_conversation: Any
) -> None:
    own = make_conversation(viewer=user)
    message = said_in_own_chat(memory_on, user, own)

    html = memory_page(user)

    assert f'href="/conversations/{own.pk}/#message-{message}"' in html


def test_search_shows_only_matching_items(household: dict[str, str], user: Any) -> None:
    html = memory_page(user, q="boiler")

    assert "The boiler code is 4471." in html
    assert "biscuits" not in html.split('id="memory-items"')[1].split("</ol>")[0]


def test_the_confirmation_says_what_forgetting_removes_and_what_it_does_not(
    household: dict[str, str], user: Any
) -> None:
    response = page_as(user).get(f"/memory/items/{household['alice_private']}/forget/?soul=pippa")

    html = response.content.decode()
    assert response.status_code == 200
    assert "Alice hides the biscuits." in html
    assert "earlier messages of a conversation still show what was said there" in html
    assert "delete the conversation" in html


def test_forgetting_through_the_page_forgets_and_says_so(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = page_as(user)
    url = f"/memory/items/{household['alice_private']}/forget/"

    response = client.post(url, {"soul": "pippa"}, follow=True)

    assert "The memory is forgotten." in response.content.decode()
    assert "biscuits" not in response.content.decode()
    assert household["alice_private"] not in head(memory_on, viewer=user)["items"]


def test_a_member_cannot_open_or_send_the_forget_of_someone_elses_item(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = page_as(user)
    url = f"/memory/items/{household['bob_household']}/forget/"

    assert client.get(url, {"soul": "pippa"}).status_code == 403
    assert client.post(url, {"soul": "pippa"}).status_code == 403
    assert household["bob_household"] in head(memory_on)["items"]


def test_changing_scope_on_the_page_shares_the_item(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any, bob: Any
) -> None:
    response = page_as(user).post(
        f"/memory/items/{household['alice_private']}/scope/",
        {"soul": "pippa", "scope": "household"},
        follow=True,
    )

    assert "The memory is now household" in response.content.decode()
    assert household["alice_private"] in head(memory_on, viewer=bob)["items"]


def test_the_default_scope_preference_is_saved_for_the_member(soul: Any, user: Any) -> None:
    response = page_as(user).post(
        "/memory/preference/", {"default_scope": "household"}, follow=True
    )

    assert MemberPreference.objects.get(user=user).default_scope == "household"
    assert "Saved" in response.content.decode()
    page_as(user).post("/memory/preference/", {"default_scope": "everyone"})
    assert MemberPreference.objects.get(user=user).default_scope == "household"


def test_a_manager_sees_counts_of_private_items_not_their_text_and_may_forget_a_member(
    memory_on: ReferenceEngine, household: dict[str, str], make_user: Any, bob: Any
) -> None:
    manager = grant_manage_memory(make_user("carol", is_staff=True))
    client = page_as(manager)

    html = client.get("/memory/").content.decode()

    assert "Bob: 1 private" in html
    assert "Alice: 1 private" in html
    assert "surprise" not in html
    assert "biscuits" not in html
    confirm = client.get(f"/memory/members/{bob.pk}/forget/", {"soul": "pippa", "name": "Bob"})
    assert "every memory Bob said, private and household" in confirm.content.decode()
    done = client.post(f"/memory/members/{bob.pk}/forget/", {"soul": "pippa"}, follow=True)
    assert "2 memories this member said to Pippa are forgotten." in done.content.decode()
    assert head(memory_on, viewer=bob)["items"] == []


def test_a_member_may_not_open_the_forget_member_page(soul: Any, user: Any, bob: Any) -> None:
    assert page_as(user).get(f"/memory/members/{bob.pk}/forget/").status_code == 403


@pytest.mark.parametrize(
    ("switch", "words", "staff_words"),
    [
        (
            "engine_down",
            "Pippa's memory cannot be reached right now.",
            "The memory engine",  # did not answer, or (after the member's calls) is paused
        ),
        (
            "memory_off",
            "Memory is switched off for this household.",
            "Memory is switched off for this household (PIPPA_MEMORY_ENABLED=false)",
        ),
        (
            "unconfigured",
            "Pippa's memory cannot be reached right now.",
            "No memory engine is configured",
        ),
    ],
)
def test_with_memory_unavailable_the_page_says_why_and_never_that_nothing_is_remembered(
    memory_on: ReferenceEngine,
    household: dict[str, str],
    user: Any,
    make_user: Any,
    configure: Any,
    switch: str,
    words: str,
    staff_words: str,
) -> None:
    """A member reads it in plain words (no "engine"); staff read the precise cause."""
    configure(
        **{
            "engine_down": {"URL": "http://127.0.0.1:9"},
            "memory_off": {"ENABLED": False},
            "unconfigured": {"URL": ""},
        }[switch]
    )
    client = page_as(user)

    response = client.get("/memory/")
    forget = client.post(
        f"/memory/items/{household['alice_private']}/forget/", {"soul": "pippa"}, follow=True
    )

    html = unescape(response.content.decode())
    assert response.status_code == 200
    assert 'id="memory-unavailable"' in html
    assert words in html
    assert "engine" not in html.lower()
    assert "remembers nothing" not in html
    assert "Nothing was forgotten." in forget.content.decode()
    assert "engine" not in forget.content.decode().lower()
    staff = make_user("carol")
    staff.is_staff = True
    staff.save()
    assert staff_words in unescape(page_as(staff).get("/memory/").content.decode())
    assert "The memory is forgotten." not in forget.content.decode()
    assert household["alice_private"] in head(memory_on, viewer=user)["items"]
