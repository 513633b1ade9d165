"""The member sees and steers what a new chat carries: the memory page and its API say how many
memories the soul keeps that the member may see and how many a chat they begin now carries (from
the head's ``items`` and ``left_out``), mark each memory such a chat carries, and let the member
who said a memory mark it *keep in every chat* and unmark it (``PATCH`` with ``keep``), by the
same rule as a scope change. Driven over real HTTP against a stand-in engine that speaks contract
version 3's ``keep`` and ``left_out`` (``keeping_engine.py``), and against the reference engine
for an engine that does not."""

import re
from collections.abc import Iterator
from typing import Any

import pytest

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as, page_as
from tests.support.engine_token import TOKEN
from tests.support.household_memory import add_memory, memory_page
from tests.support.keeping_engine import KeepingEngine, serving
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

OLDEST = "Grandma's birthday is the ninth of May."


@pytest.fixture
def keeping(configure: Any) -> Iterator[KeepingEngine]:
    yield from serving(KeepingEngine(token=TOKEN, holds=2), configure)


@pytest.fixture
def household(keeping: KeepingEngine, soul: Any, user: Any, bob: Any) -> dict[str, str]:
    """Four memories Alice may see (the oldest hers), and one private to Bob."""
    return {
        "oldest": keeping.add(OLDEST, by=user),
        "bins": keeping.add("The bins go out on Tuesday.", by=bob),
        "bobs": keeping.add("Bob is planning a surprise.", scope="private", by=bob),
        "tea": keeping.add("Alice takes her tea with honey.", scope="private", by=user),
        "boiler": keeping.add("The boiler code is 4471.", by=bob),
    }


def entry(page: str, item_id: str) -> str:
    """The page's list entry of one memory."""
    found = re.search(rf'<li class="memory-item" id="item-{item_id}">(.*?)</li>', page, re.S)
    assert found, f"no entry for {item_id}"
    return found.group(1)


def patches(engine: KeepingEngine) -> list[dict[str, Any]]:
    return [r["body"] for r in engine.received if r["method"] == "PATCH"]


def test_the_page_says_how_many_memories_there_are_and_marks_those_a_new_chat_carries(
    household: dict[str, str], user: Any
) -> None:
    page = memory_page(user, soul="pippa")

    assert "Pippa keeps 4 memories you can see." in page
    assert "A chat you begin now carries 2 of them" in page
    assert "In new chats" in entry(page, household["boiler"])
    assert "In new chats" in entry(page, household["tea"])
    assert "In new chats" not in entry(page, household["oldest"])
    assert "Bob is planning a surprise." not in page


def test_a_member_marks_her_memory_keep_in_every_chat_and_unmarks_it(
    household: dict[str, str], keeping: KeepingEngine, user: Any
) -> None:
    oldest = household["oldest"]
    client = page_as(user)

    kept = client.post(f"/memory/items/{oldest}/keep/", {"soul": "pippa", "keep": "true"})
    page = client.get("/memory/?soul=pippa").content.decode()

    assert kept.status_code == 302
    assert patches(keeping) == [{"viewer": str(user.pk), "keep": True}]
    assert "Kept in every chat" in entry(page, oldest)
    assert "In new chats" in entry(page, oldest)
    assert "Stop keeping in every chat" in entry(page, oldest)

    client.post(f"/memory/items/{oldest}/keep/", {"soul": "pippa", "keep": "false"})
    page = client.get("/memory/?soul=pippa").content.decode()

    assert patches(keeping)[-1] == {"viewer": str(user.pk), "keep": False}
    assert "Kept in every chat" not in entry(page, oldest)
    assert "In new chats" not in entry(page, oldest)


def test_only_the_member_who_said_a_memory_may_mark_it(
    household: dict[str, str], keeping: KeepingEngine, user: Any
) -> None:
    bins = household["bins"]

    on_page = page_as(user).post(f"/memory/items/{bins}/keep/", {"soul": "pippa", "keep": "true"})
    by_api = api_as(user).patch(
        f"/api/memory/items/{bins}/?soul=pippa", {"keep": True}, format="json"
    )
    page = memory_page(user, soul="pippa")

    assert on_page.status_code == 403
    assert by_api.status_code == 403
    assert by_api.json()["error"]["code"] == "not_yours"
    assert patches(keeping) == []
    assert "Keep in every chat" not in entry(page, bins)
    assert "Keep in every chat" in entry(page, household["oldest"])


def test_the_api_lists_what_a_new_chat_carries_and_sets_the_mark(
    household: dict[str, str], keeping: KeepingEngine, user: Any
) -> None:
    api = api_as(user)

    listing = api.get("/api/memory/items/?soul=pippa").json()
    changed = api.patch(
        f"/api/memory/items/{household['oldest']}/?soul=pippa", {"keep": True}, format="json"
    )
    relisted = api.get("/api/memory/items/?soul=pippa").json()

    assert listing["new_chats"] == {"carries": 2, "memories": 4}
    rows = {item["id"]: item for item in listing["items"]}
    assert rows[household["boiler"]]["in_new_chats"] is True
    oldest = rows[household["oldest"]]
    assert (oldest["keep"], oldest["may_keep"], oldest["in_new_chats"]) == (False, True, False)
    assert rows[household["bins"]]["may_keep"] is False
    assert changed.status_code == 200, changed.content
    assert changed.json()["item"]["keep"] is True
    assert changed.json()["revision"] != listing["revision"]
    oldest = {item["id"]: item for item in relisted["items"]}[household["oldest"]]
    assert (oldest["keep"], oldest["in_new_chats"]) == (True, True)


@pytest.mark.parametrize(
    "body",
    [{}, {"keep": "perhaps"}, {"keep": None}, {"keep": True, "scope": "private"}],
    ids=["nothing", "not-a-boolean", "null", "both-at-once"],
)
def test_a_bad_change_is_refused_clearly_and_reaches_no_engine(
    household: dict[str, str], keeping: KeepingEngine, user: Any, body: dict[str, Any]
) -> None:
    answer = api_as(user).patch(
        f"/api/memory/items/{household['oldest']}/?soul=pippa", body, format="json"
    )

    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["code"] == "invalid"
    assert patches(keeping) == []


def test_a_new_chat_carries_the_memory_its_member_kept(
    household: dict[str, str], make_conversation: Any, user: Any, sent_requests: list[Any]
) -> None:
    page_as(user).post(
        f"/memory/items/{household['oldest']}/keep/", {"soul": "pippa", "keep": "true"}
    )

    run_turn(conversation=make_conversation(), text="hello")

    assert OLDEST in sent_requests[-1]["system"]


def test_an_engine_that_does_not_know_the_mark_is_said_plainly_and_nothing_changes(
    memory_on: ReferenceEngine, soul: Any, user: Any
) -> None:
    item = add_memory(memory_on, OLDEST, by=user)
    client = page_as(user)

    page = client.get("/memory/?soul=pippa").content.decode()
    # An engine from before the mark refuses the field it does not know, as a 400.
    memory_on.set_fault("error", status=400, methods=["PATCH"])
    answer = client.post(
        f"/memory/items/{item}/keep/", {"soul": "pippa", "keep": "true"}, follow=True
    )

    assert "keeps 1 memory you can see. A chat you begin now carries all of them." in page
    assert "Nothing was changed." in answer.content.decode()
    assert "Kept in every chat" not in answer.content.decode()
