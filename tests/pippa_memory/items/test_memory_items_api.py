"""``/api/memory/items/``: two members and a manager against the reference engine over a socket.
A member sees household items and their own private ones, forgets and re-scopes what they said;
a manager sees counts, never another member's text; every engine call names the viewer; with
the engine down or memory off every route says memory is unavailable and changes nothing."""

import json
import uuid
from typing import Any

import pytest
import requests
from django.test import Client
from rest_framework.test import APIClient

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import (
    HEADERS,
    add_memory,
    grant_manage_memory,
    head,
    management_calls,
    recall,
    said_in_own_chat,
)
from webui.models import Conversation

pytestmark = pytest.mark.django_db

ITEMS = "/api/memory/items/"


@pytest.fixture
def household(memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any) -> dict[str, str]:
    """Alice's private and household memories, Bob's private one, and an unattended run's."""
    return {
        "alice_private": add_memory(
            memory_on, "Alice hides the biscuits.", scope="private", by=user
        ),
        "alice_household": add_memory(memory_on, "The bins go out on Tuesday.", by=user),
        "bob_private": add_memory(
            memory_on, "Bob is planning a surprise.", scope="private", by=bob
        ),
        "bob_household": add_memory(memory_on, "The boiler code is 4471.", by=bob),
        "unattended": add_memory(memory_on, "The garden was watered."),
    }


def engine_request_log(engine: ReferenceEngine) -> list[dict[str, Any]]:
    """What the engine received, as its control door tells it over the socket."""
    answer = requests.get(f"{engine.url}/_control/requests", headers=HEADERS, timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()["requests"]


def listing(client: APIClient, **params: str) -> Any:
    return client.get(ITEMS, {"soul": "pippa", **params})


def test_a_member_sees_household_items_and_only_their_own_private_ones_newest_first(
    household: dict[str, str], user: Any
) -> None:
    response = listing(api_as(user))

    assert response.status_code == 200
    body = response.json()
    assert [i["id"] for i in body["items"]] == [
        household["unattended"],
        household["bob_household"],
        household["alice_household"],
        household["alice_private"],
    ]
    assert "surprise" not in json.dumps(body)
    mine = body["items"][-1]
    assert mine["said_by"] == {"member": str(user.pk), "name": "Alice"}
    assert mine["scope"] == "private"
    assert mine["at"]
    assert (mine["yours"], mine["may_forget"], mine["may_change_scope"]) == (True, True, True)
    theirs = body["items"][1]
    assert (theirs["yours"], theirs["may_forget"], theirs["may_change_scope"]) == (False,) * 3
    assert body["items"][0]["said_by"] is None
    assert body["members"] is None


def test_search_answers_only_items_holding_the_words(household: dict[str, str], user: Any) -> None:
    body = listing(api_as(user), q="BINS tuesday").json()

    assert [i["text"] for i in body["items"]] == ["The bins go out on Tuesday."]


def test_an_item_links_to_its_turn_only_when_the_conversation_is_the_members_own(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any
) -> None:
    own = make_conversation(viewer=user)
    theirs = make_conversation(viewer=bob)
    message = said_in_own_chat(memory_on, user, own)
    add_memory(memory_on, "From Bob's chat.", by=bob, source={"conversation": str(theirs.pk)})

    from_bob, mine = listing(api_as(user)).json()["items"]

    assert mine["turn_url"] == f"/conversations/{own.pk}/#message-{message}"
    assert from_bob["turn_url"] is None
    assert listing(api_as(bob)).json()["items"][0]["turn_url"] == f"/conversations/{theirs.pk}/"


def test_another_members_conversation_and_message_ids_never_show_on_a_household_item(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any
) -> None:
    own, theirs = make_conversation(viewer=user), make_conversation(viewer=bob)
    mine, bobs = str(uuid.uuid4()), str(uuid.uuid4())
    add_memory(
        memory_on, "From my chat.", by=user, source={"conversation": str(own.pk), "message": mine}
    )
    add_memory(
        memory_on,
        "From Bob's chat.",
        by=bob,
        source={"conversation": str(theirs.pk), "message": bobs},
    )
    alice = api_as(user)

    listed = listing(alice)
    from_bob, from_me = listed.json()["items"]
    browser = Client()
    browser.force_login(user)
    page = browser.get("/memory/").content.decode()

    assert from_bob["scope"] == "household"
    assert from_bob["source"] == {"conversation": None, "message": None, "tool_use": None}
    assert from_me["source"]["conversation"] == str(own.pk)
    assert from_me["source"]["message"] == mine
    for shown in (listed.content.decode(), page):
        assert str(theirs.pk) not in shown
        assert bobs not in shown
    assert listing(api_as(bob)).json()["items"][0]["source"]["conversation"] == str(theirs.pk)


def test_a_manager_sees_counts_of_private_items_never_their_text(
    household: dict[str, str], make_user: Any, user: Any, bob: Any
) -> None:
    manager = grant_manage_memory(make_user("carol", is_staff=True))

    body = listing(api_as(manager)).json()

    text = json.dumps(body)
    assert "biscuits" not in text
    assert "surprise" not in text
    assert {i["id"] for i in body["items"]} == {
        household["alice_household"],
        household["bob_household"],
        household["unattended"],
    }
    counts = {m["member"]: m["private_items"] for m in body["members"]}
    assert counts == {str(user.pk): 1, str(bob.pk): 1}
    assert all(i["may_forget"] for i in body["items"])


def test_forgetting_ones_own_item_removes_it_from_recall_the_head_and_the_listing(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = api_as(user)

    response = client.delete(f"{ITEMS}{household['alice_private']}/?soul=pippa")

    assert response.status_code == 200
    assert response.json()["forgotten"] == household["alice_private"]
    assert response.json()["revision"] == head(memory_on, viewer=user)["revision"]
    assert household["alice_private"] not in head(memory_on, viewer=user)["items"]
    assert "Alice hides the biscuits." not in recall(memory_on, "biscuits", viewer=user)
    assert household["alice_private"] not in {i["id"] for i in listing(client).json()["items"]}


def test_a_member_may_not_forget_or_rescope_what_someone_else_said(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = api_as(user)
    item = household["bob_household"]

    forget = client.delete(f"{ITEMS}{item}/?soul=pippa")
    rescope = client.patch(f"{ITEMS}{item}/?soul=pippa", {"scope": "private"}, format="json")

    assert forget.status_code == 403
    assert forget.json()["error"]["code"] == "not_yours"
    assert rescope.status_code == 403
    assert not [r for r in memory_on.received if r["method"] in {"DELETE", "PATCH"}]
    assert item in head(memory_on, viewer=user)["items"]


def test_another_members_private_item_is_not_found_for_anyone_else(
    household: dict[str, str], user: Any, make_user: Any
) -> None:
    manager = grant_manage_memory(make_user("carol", is_staff=True))
    item = household["bob_private"]

    for client in (api_as(user), api_as(manager)):
        response = client.delete(f"{ITEMS}{item}/?soul=pippa")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_a_manager_may_forget_a_household_item_someone_else_said(
    memory_on: ReferenceEngine, household: dict[str, str], make_user: Any, bob: Any
) -> None:
    manager = grant_manage_memory(make_user("carol", is_staff=True))

    response = api_as(manager).delete(f"{ITEMS}{household['bob_household']}/?soul=pippa")

    assert response.status_code == 200
    assert household["bob_household"] not in head(memory_on, viewer=bob)["items"]


def test_changing_scope_shares_a_private_item_and_takes_a_household_one_back(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any, bob: Any
) -> None:
    client = api_as(user)
    url = f"{ITEMS}{household['alice_private']}/?soul=pippa"

    shared = client.patch(url, {"scope": "household"}, format="json")

    assert shared.status_code == 200
    assert shared.json()["item"]["scope"] == "household"
    assert household["alice_private"] in head(memory_on, viewer=bob)["items"]

    private = client.patch(url, {"scope": "private"}, format="json")

    assert private.json()["item"]["scope"] == "private"
    assert household["alice_private"] not in head(memory_on, viewer=bob)["items"]
    assert household["alice_private"] in head(memory_on, viewer=user)["items"]


def test_a_bad_scope_is_refused_by_name_and_changes_nothing(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    response = api_as(user).patch(
        f"{ITEMS}{household['alice_private']}/?soul=pippa", {"scope": "everyone"}, format="json"
    )

    assert response.status_code == 400
    assert "scope" in response.json()["error"]["details"]
    assert not [r for r in memory_on.received if r["method"] == "PATCH"]


def test_forgetting_a_member_needs_the_permission_and_forgets_all_they_said(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any, bob: Any, make_user: Any
) -> None:
    url = f"/api/memory/members/{bob.pk}/forget/?soul=pippa"
    refused = api_as(user).post(url)
    assert refused.status_code == 403
    assert household["bob_household"] in head(memory_on)["items"]

    manager = grant_manage_memory(make_user("carol", is_staff=True))
    response = api_as(manager).post(url)

    assert response.status_code == 200
    assert response.json()["forgotten"] == 2
    assert not {household["bob_private"], household["bob_household"]} & set(
        head(memory_on, viewer=bob)["items"]
    )
    assert household["alice_household"] in head(memory_on)["items"]


def test_every_management_call_names_the_viewer(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = api_as(user)
    listing(client, q="bins")
    client.patch(
        f"{ITEMS}{household['alice_private']}/?soul=pippa", {"scope": "household"}, format="json"
    )
    client.delete(f"{ITEMS}{household['alice_private']}/?soul=pippa")

    calls = management_calls(memory_on)
    assert {c["method"] for c in calls} == {"GET", "PATCH", "DELETE"}
    for call in calls:
        named = f"viewer={user.pk}" in call["query"].split("&")
        assert named or (call["body"] or {}).get("viewer") == str(user.pk), call


@pytest.mark.parametrize("action", ["forget", "make_private", "forget_page"])
def test_finding_the_item_a_change_is_about_is_one_lookup_never_a_walk_over_pages(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any, action: str
) -> None:
    for number in range(150):  # more than a listing page holds, said before the item
        memory_on.state.remember("pippa", f"Note {number}.", member=str(user.pk), name="Alice")
    item = household["alice_household"]
    before = len(engine_request_log(memory_on))
    client = api_as(user)
    if action == "forget":
        response = client.delete(f"{ITEMS}{item}/?soul=pippa")
    elif action == "make_private":
        response = client.patch(f"{ITEMS}{item}/?soul=pippa", {"scope": "private"}, format="json")
    else:
        response = client.get(f"/memory/items/{item}/forget/", {"soul": "pippa"})

    assert response.status_code == 200, response.content
    log = engine_request_log(memory_on)[before:]
    reads = [(r["method"], r["path"]) for r in log if r["method"] == "GET"]
    assert reads == [("GET", f"/v1/souls/pippa/items/{item}")]


def test_a_change_without_the_csrf_token_is_refused_and_nothing_is_forgotten(
    memory_on: ReferenceEngine, household: dict[str, str], user: Any
) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)

    response = client.delete(f"{ITEMS}{household['alice_private']}/?soul=pippa")

    assert response.status_code == 403
    assert household["alice_private"] in head(memory_on, viewer=user)["items"]


def test_an_unknown_soul_is_refused_by_name(memory_on: ReferenceEngine, user: Any) -> None:
    response = api_as(user).get(ITEMS, {"soul": "nobody"})

    assert response.status_code == 400
    assert "soul" in response.json()["error"]["details"]


def unavailable_answers(user: Any, item: str) -> list[Any]:
    client = api_as(user)
    return [
        listing(client),
        client.delete(f"{ITEMS}{item}/?soul=pippa"),
        client.patch(f"{ITEMS}{item}/?soul=pippa", {"scope": "household"}, format="json"),
        client.post(f"/api/memory/members/{user.pk}/forget/?soul=pippa"),
    ]


@pytest.mark.parametrize(
    ("switch", "reason"),
    [("engine_down", "connection_failed"), ("memory_off", "memory_disabled")],
)
def test_with_the_engine_down_or_memory_off_every_route_says_memory_is_unavailable(
    memory_on: ReferenceEngine,
    household: dict[str, str],
    configure: Any,
    make_user: Any,
    switch: str,
    reason: str,
) -> None:
    manager = grant_manage_memory(make_user("carol", is_staff=True, is_superuser=True))
    item = add_memory(memory_on, "Carol's own note.", scope="private", by=manager)
    if switch == "engine_down":
        # Nothing listens on the discard port; the breaker stays closed to keep the reason.
        configure(URL="http://127.0.0.1:9", BREAKER_FAIL_MAX=100)
    else:
        configure(ENABLED=False)

    for response in unavailable_answers(manager, item):
        assert response.status_code == 503, response.content
        error = response.json()["error"]
        assert error["code"] == "memory_unavailable"
        assert error["details"]["reason"] == reason
        assert "items" not in response.json()

    assert item in head(memory_on, viewer=manager)["items"]
    assert Conversation.objects.count() == 0
