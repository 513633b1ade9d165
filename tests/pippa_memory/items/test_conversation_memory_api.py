"""``/api/memory/conversations/<id>/`` and ``.../refresh/``: "Pippa's memory in this chat".

Only the conversation's own member sees what its pinned block holds (each item with who said
it), and how many memories they may see came since; anyone else, staff included, gets 404 as on
the other conversation routes. "Bring up to date" is one recorded re-pin (reason
``member_refresh``) that the next turn takes. Another member's private memory never appears, even
if a stored block named it. An engine that is down is ``memory_unavailable`` 503, and a refresh
then changes nothing.
"""

from typing import Any

import pytest

from pippa_memory.items.conversation_memory import MEMBER_REFRESH
from pippa_memory.models import MemoryBlock, PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, chat_memory_url, said_in_chat
from tests.support.memory_turns import started
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

ALICE_PRIVATE = "Alice hides the biscuits."
BOB_PRIVATE = "Bob is planning a surprise."
SHARED = "The boiler code is 4471."
LATER = "The bins go out on Tuesday."


@pytest.fixture
def household(memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any) -> dict[str, str]:
    return {
        "alice_private": add_memory(
            memory_on, ALICE_PRIVATE, scope="private", by=user, source=said_in_chat()
        ),
        "bob_private": add_memory(memory_on, BOB_PRIVATE, scope="private", by=bob),
        "shared": add_memory(memory_on, SHARED, by=bob),
    }


@pytest.fixture
def pinned(household: dict[str, str], make_conversation: Any) -> Conversation:
    """Alice's conversation, pinned at its first turn; then one memory comes later."""
    conversation = make_conversation(title="Older chat")
    return started(conversation)


def test_the_member_sees_what_her_chat_holds_with_who_said_it_and_what_came_since(
    pinned: Conversation, user: Any, memory_on: ReferenceEngine
) -> None:
    add_memory(memory_on, LATER, by=user, source=said_in_chat())

    response = api_as(user).get(chat_memory_url(pinned))

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["state"] == "pinned"
    assert body["revision"] == pinned.pinned_head
    assert body["pinned_at"] == pinned.pinned_at.isoformat()
    said = {item["text"]: item["said"] for item in body["items"]}
    assert said == {ALICE_PRIVATE: "You said it", SHARED: "Bob said it"}
    assert body["newer"] == 1
    assert "surprise" not in response.content.decode()


def test_nobody_else_sees_or_refreshes_a_members_chat_memory(
    pinned: Conversation, bob: Any, make_user: Any
) -> None:
    staff = make_user("carol", is_staff=True, is_superuser=True)
    for other in (bob, staff):
        client = api_as(other)
        for response in (
            client.get(chat_memory_url(pinned)),
            client.post(chat_memory_url(pinned, refresh=True)),
        ):
            assert response.status_code == 404
            assert response.json()["error"]["code"] == "not_found"
    assert not PinRecord.objects.filter(reason=MEMBER_REFRESH).exists()
    assert api_as(bob).get("/api/memory/conversations/not-a-uuid/").status_code == 404


def test_bring_up_to_date_is_one_recorded_repin_the_next_turn_takes(
    pinned: Conversation, user: Any, memory_on: ReferenceEngine
) -> None:
    add_memory(memory_on, LATER, by=user, source=said_in_chat())
    client = api_as(user)

    response = client.post(chat_memory_url(pinned, refresh=True))

    assert response.status_code == 200, response.content
    assert "afresh at your next message" in response.json()["refreshed"]
    assert "one prompt-cache miss" in response.json()["refresh_cost"]
    record = PinRecord.objects.get(conversation=pinned, reason=MEMBER_REFRESH)
    assert record.outcome == PinRecord.Outcome.REPIN_REQUESTED
    assert record.requested_by == user
    assert client.get(chat_memory_url(pinned)).json()["state"] == "waiting"

    pinned.refresh_from_db()
    run_turn(conversation=pinned, text="what do you know now?")
    after = client.get(chat_memory_url(pinned)).json()
    assert after["state"] == "pinned"
    assert LATER in {item["text"] for item in after["items"]}
    assert after["newer"] == 0


def test_another_members_private_memory_never_shows_even_if_a_block_named_it(
    pinned: Conversation, user: Any, household: dict[str, str]
) -> None:
    block = MemoryBlock.objects.get(
        soul=pinned.soul, revision=pinned.pinned_head, viewer=str(user.pk)
    )
    MemoryBlock.objects.filter(pk=block.pk).update(items=[*block.items, household["bob_private"]])

    response = api_as(user).get(chat_memory_url(pinned))

    assert response.status_code == 200
    assert "surprise" not in response.content.decode()
    assert household["bob_private"] not in response.content.decode()


def test_with_the_engine_down_both_routes_say_memory_is_unavailable_and_nothing_changes(
    pinned: Conversation, user: Any, configure: Any
) -> None:
    configure(URL="http://127.0.0.1:9")
    client = api_as(user)

    for response in (
        client.get(chat_memory_url(pinned)),
        client.post(chat_memory_url(pinned, refresh=True)),
    ):
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["code"] == "memory_unavailable"
        assert error["details"]["reason"]
    head = pinned.pinned_head
    pinned.refresh_from_db()
    assert pinned.pinned_head == head
    assert not PinRecord.objects.filter(reason=MEMBER_REFRESH).exists()


def test_a_temporary_chat_says_so_plainly_and_has_nothing_to_refresh(
    memory_on: ReferenceEngine, make_conversation: Any, user: Any
) -> None:
    temporary = make_conversation(temporary=True)
    client = api_as(user)

    body = client.get(chat_memory_url(temporary)).json()
    refused = client.post(chat_memory_url(temporary, refresh=True))

    assert body["state"] == "temporary"
    assert body["heading"] == "No memory in a temporary chat"
    assert body["summary"] == "Pippa brings no memory into it and keeps nothing from it."
    assert body["can_refresh"] is False
    assert body["items"] == []
    assert body["newer"] == 0
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "not_remembered"


def test_a_chat_pinned_absent_says_so_and_counts_what_came_since(
    unreached_chat: Conversation, memory_on: ReferenceEngine, user: Any
) -> None:
    conversation = unreached_chat
    add_memory(memory_on, LATER, by=user, source=said_in_chat())

    body = api_as(user).get(chat_memory_url(conversation)).json()

    assert body["state"] == "absent"
    assert body["heading"] == "Pippa brought no memory into this chat"
    assert body["summary"] == (
        "Pippa's memory could not be reached when this chat began, so she brought none into "
        "it. She tries again at your next message."
    )
    assert body["line"] == "1 new since"
    assert body["can_refresh"] is True
    assert body["items"] == []
    assert body["newer"] == 1


def test_the_conversation_page_carries_the_panel_collapsed(pinned: Conversation, user: Any) -> None:
    html = api_as(user).get(f"/conversations/{pinned.pk}/").content.decode()

    assert '<details class="memory-panel" id="memory-panel"' in html
    assert "memory in this chat" in html
    assert f"/api/memory/conversations/{pinned.pk}/refresh/" in html


def test_bringing_chats_up_to_date_is_rate_limited_per_member_with_retry_after(
    pinned: Conversation, user: Any, bob: Any, make_conversation: Any
) -> None:
    alice = api_as(user)
    answers = [alice.post(chat_memory_url(pinned, refresh=True)) for _ in range(12)]

    assert [a.status_code for a in answers] == [200] * 10 + [429] * 2
    refused = answers[-1]
    assert int(refused["Retry-After"]) > 0
    error = refused.json()["error"]
    assert error["code"] == "too_many_refreshes"
    assert error["details"] == {"limit": 10, "seconds": 60}
    assert "Try again in" in error["message"]
    assert PinRecord.objects.filter(conversation=pinned, reason=MEMBER_REFRESH).count() == 10
    # Another member's refreshes are their own.
    bobs = make_conversation(viewer=bob)
    run_turn(conversation=bobs, text="hello")
    assert api_as(bob).post(chat_memory_url(bobs, refresh=True)).status_code == 200
