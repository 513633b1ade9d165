"""Contract v2 on the reference engine, over a real socket: memory has an owner. Every read
answers only what its viewer may see (household items and the viewer's own private ones; no
viewer, household only), forgotten items never come back by any route, and the demo seed keeps its private memory for the
demo member."""

from typing import Any

import jsonschema
import pytest
import requests

from pippa_memory.engine import contract
from pippa_memory.management.commands.memory_engine import demo_member
from reference_engine.demo import seed_demo
from reference_engine.server import ReferenceEngine
from tests.support.engine_v2 import ALICE, BOB, call, get, version_2, version_2_items


def forget(engine: ReferenceEngine, item_id: str, viewer: str | None) -> requests.Response:
    params = {"viewer": viewer} if viewer else {}
    return call(engine, "DELETE", f"/v1/souls/pippa/items/{item_id}", params=params)


def rescope(engine: ReferenceEngine, item_id: str, **body: Any) -> requests.Response:
    return call(engine, "PATCH", f"/v1/souls/pippa/items/{item_id}", json=body)


def block(engine: ReferenceEngine, revision: str, viewer: str) -> requests.Response:
    return call(engine, "GET", f"/v1/souls/pippa/blocks/{revision}", params={"viewer": viewer})


@pytest.fixture
def household(engine: ReferenceEngine) -> dict[str, str]:
    """A household item, Alice's private item and Bob's private item; their ids by name."""
    engine.state.remember("pippa", "The bins go out on Tuesday.", member="7", name="Alice")
    engine.state.remember(
        "pippa", "Alice's key is under the pot.", scope="private", member="7", name="Alice"
    )
    engine.state.remember("pippa", "Bob's key is in the shed.", scope="private", **BOB)
    ids = [m.id for m in engine.state.souls["pippa"].memories]
    return dict(zip(["household", "alice", "bob"], ids, strict=True))


def texts(items: list[dict[str, Any]]) -> list[str]:
    return [item["text"] for item in items]


def test_the_head_renders_household_items_and_only_the_viewers_own_private_items(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    alice = get(engine, "/v1/souls/pippa/head", viewer="7")
    bob = get(engine, "/v1/souls/pippa/head", viewer="8")
    unattended = get(engine, "/v1/souls/pippa/head")

    for head in (alice, bob, unattended):
        jsonschema.validate(head, version_2(contract.BLOCK, "left_out"))
    assert (alice["viewer"], bob["viewer"], unattended["viewer"]) == ("7", "8", None)
    assert alice["items"] == [household["household"], household["alice"]]
    assert bob["items"] == [household["household"], household["bob"]]
    assert unattended["items"] == [household["household"]]
    assert "under the pot" in alice["block"]
    assert "shed" not in alice["block"]
    assert "in the shed" in bob["block"]
    assert "pot" not in bob["block"]
    assert "pot" not in unattended["block"]
    assert "shed" not in unattended["block"]
    assert "(private) Alice's key is under the pot." in alice["block"]


def test_a_past_block_is_the_same_for_the_same_viewer_and_never_shows_another_members_item(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    head = get(engine, "/v1/souls/pippa/head", viewer="7")
    engine.state.remember("pippa", "Something later.")

    again = get(engine, f"/v1/souls/pippa/blocks/{head['revision']}", viewer="7")
    as_bob = get(engine, f"/v1/souls/pippa/blocks/{head['revision']}", viewer="8")

    assert again == head
    assert as_bob["items"] == [household["household"], household["bob"]]
    assert "pot" not in as_bob["block"]
    empty_viewer = call(engine, "GET", "/v1/souls/pippa/head", params={"viewer": ""})
    assert empty_viewer.status_code == 400


def test_recall_answers_only_what_the_viewer_may_see_with_provenance_on_every_item(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    body = {"soul": "pippa", "conversation": "c1", "query": "key", "limit": 5}

    alice = call(engine, "POST", "/v1/recall", json={**body, "viewer": "7"}).json()
    unattended = call(engine, "POST", "/v1/recall", json={**body, "viewer": None}).json()
    fallback = call(engine, "POST", "/v1/recall", json={**body, "query": "sofa", "viewer": "8"})

    jsonschema.validate(alice, version_2_items(contract.RECALL))
    assert (alice["match"], texts(alice["items"])) == ("exact", ["Alice's key is under the pot."])
    (item,) = alice["items"]
    assert item["scope"] == "private"
    assert item["said_by"] == ALICE
    assert set(item["source"]) == {"conversation", "message", "tool_use"}
    assert unattended["match"] == "fallback"
    assert texts(unattended["items"]) == ["The bins go out on Tuesday."]
    assert texts(fallback.json()["items"]) == [
        "The bins go out on Tuesday.",
        "Bob's key is in the shed.",
    ]


def test_an_asks_answer_holds_only_what_the_asking_viewer_may_see(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    for conversation, viewer in [("c-bob", "8"), ("c-none", None)]:
        ask = {"soul": "pippa", "conversation": conversation, "question": "key?", "viewer": viewer}
        assert call(engine, "POST", "/v1/asks", json=ask).status_code == 202

    (bob,) = get(engine, "/v1/conversations/c-bob/answers")["answers"]
    (unattended,) = get(engine, "/v1/conversations/c-none/answers")["answers"]

    assert "in the shed" in bob["answer"]
    assert "pot" not in bob["answer"]
    assert "shed" not in unattended["answer"]
    assert "pot" not in unattended["answer"]


def test_listings_page_newest_first_through_what_the_viewer_may_see_and_search_words(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    for n in range(3):
        engine.state.remember("pippa", f"Alice's note number {n}.", scope="private", **ALICE)

    first = get(engine, "/v1/souls/pippa/items", viewer="7", limit="3")
    second = get(engine, "/v1/souls/pippa/items", viewer="7", limit="3", cursor=first["next"])
    searched = get(engine, "/v1/souls/pippa/items", viewer="7", q="KEY pot")
    unattended = get(engine, "/v1/souls/pippa/items")

    jsonschema.validate(first, version_2_items(contract.ITEMS))
    assert texts(first["items"]) == [f"Alice's note number {n}." for n in (2, 1, 0)]
    assert texts(second["items"]) == [
        "Alice's key is under the pot.",
        "The bins go out on Tuesday.",
    ]
    assert second["next"] is None
    assert first["revision"] == engine.state.souls["pippa"].head
    assert texts(searched["items"]) == ["Alice's key is under the pot."]
    assert texts(unattended["items"]) == ["The bins go out on Tuesday."]
    for bad in ({"limit": "0"}, {"limit": "101"}, {"limit": "ten"}, {"cursor": "nope"}):
        assert call(engine, "GET", "/v1/souls/pippa/items", params=bad).status_code == 400


def test_members_are_counted_with_their_private_items_and_none_of_their_text(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    engine.state.remember("pippa", "Said by no one: a job ran.")

    response = call(engine, "GET", "/v1/souls/pippa/members")

    jsonschema.validate(response.json(), contract.MEMBERS)
    assert response.json()["members"] == [
        {"member": "7", "name": "Alice", "private_items": 1},
        {"member": "8", "name": "Bob", "private_items": 1},
    ]
    assert "key" not in response.text
    assert "bins" not in response.text


def test_a_forgotten_item_never_comes_back_by_any_route(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    before = engine.state.souls["pippa"].head
    assert forget(engine, household["alice"], "8").status_code == 404  # not Bob's to see

    forgotten = forget(engine, household["alice"], "7")

    jsonschema.validate(forgotten.json(), contract.FORGOTTEN)
    head = get(engine, "/v1/souls/pippa/head", viewer="7")
    assert forgotten.json() == {"forgotten": household["alice"], "revision": head["revision"]}
    assert head["revision"] != before
    assert head["items"] == [household["household"]]
    recall = {"soul": "pippa", "conversation": "c1", "query": "pot", "limit": 5, "viewer": "7"}
    recalled = call(engine, "POST", "/v1/recall", json=recall).json()["items"]
    assert texts(recalled) == ["The bins go out on Tuesday."]
    assert "pot" not in call(engine, "GET", "/v1/souls/pippa/items", params={"viewer": "7"}).text
    assert forget(engine, household["alice"], "7").status_code == 404


def test_past_blocks_that_held_a_forgotten_item_are_gone_and_the_others_stand(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    revision = engine.state.souls["pippa"].head
    bobs = get(engine, f"/v1/souls/pippa/blocks/{revision}", viewer="8")
    job = {"soul": "pippa", "job": {"id": "j1", "name": "n"}, "revision": revision}
    forget(engine, household["alice"], "7")

    gone = block(engine, revision, "7")

    assert (gone.status_code, gone.json()["error"]["code"]) == (410, "gone")
    assert block(engine, revision, "8").json() == bobs  # it never held Alice's item
    assert call(engine, "POST", "/v1/bundles", json=job).status_code == 200
    forget(engine, household["household"], None)
    assert call(engine, "POST", "/v1/bundles", json=job).status_code == 410
    assert block(engine, revision, "8").status_code == 410


def test_making_an_item_private_keeps_it_for_its_sayer_alone_from_then_on(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    before = get(engine, "/v1/souls/pippa/head", viewer="8")

    changed = rescope(engine, household["household"], viewer="8", scope="private")

    jsonschema.validate(changed.json(), version_2_items(contract.RESCOPED))
    assert changed.json()["item"]["scope"] == "private"
    assert changed.json()["item"]["said_by"] == ALICE
    assert changed.json()["revision"] == engine.state.souls["pippa"].head != before["revision"]
    assert get(engine, "/v1/souls/pippa/head", viewer="8")["items"] == [household["bob"]]
    assert household["household"] in get(engine, "/v1/souls/pippa/head", viewer="7")["items"]
    assert block(engine, before["revision"], "8").status_code == 410
    assert rescope(engine, household["household"], viewer="8", scope="household").status_code == 404
    back = rescope(engine, household["household"], viewer="7", scope="household")
    assert household["household"] in get(engine, "/v1/souls/pippa/head", viewer="8")["items"]
    assert (
        rescope(engine, household["household"], viewer="7", scope="household").json() == back.json()
    )


def test_a_scope_change_that_cannot_be_made_is_refused_and_changes_nothing(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    engine.state.remember("pippa", "A job noticed the boiler.")
    unattended_item = engine.state.souls["pippa"].memories[-1].id
    head = engine.state.souls["pippa"].head

    no_owner = rescope(engine, unattended_item, viewer=None, scope="private")
    bad_scope = rescope(engine, household["household"], viewer="7", scope="secret")
    unseen = rescope(engine, household["bob"], viewer="7", scope="household")

    assert (no_owner.status_code, no_owner.json()["error"]["code"]) == (409, "no_owner")
    assert (bad_scope.status_code, bad_scope.json()["error"]["code"]) == (400, "invalid_scope")
    assert (unseen.status_code, unseen.json()["error"]["code"]) == (404, "not_found")
    assert engine.state.souls["pippa"].head == head
    assert [m.scope for m in engine.state.souls["pippa"].memories] == [
        "household",
        "private",
        "private",
        "household",
    ]


def test_forgetting_a_member_forgets_everything_they_said_private_and_household(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    answer = call(engine, "POST", "/v1/souls/pippa/members/7/forget")

    jsonschema.validate(answer.json(), version_2(contract.FORGOTTEN_MEMBER, "ids"))
    assert answer.json() == {"forgotten": 2, "revision": engine.state.souls["pippa"].head}
    assert texts(get(engine, "/v1/souls/pippa/items", viewer="7")["items"]) == []
    assert texts(get(engine, "/v1/souls/pippa/items", viewer="8")["items"]) == [
        "Bob's key is in the shed."
    ]
    again = call(engine, "POST", "/v1/souls/pippa/members/7/forget").json()
    assert again == {"forgotten": 0, "revision": answer.json()["revision"]}


def test_wake_briefs_and_job_bundles_hold_household_items_only(
    engine: ReferenceEngine, household: dict[str, str]
) -> None:
    wake = {"soul": "pippa", "wake": {"kind": "soul_stream", "id": "w1"}}
    job = {"soul": "pippa", "job": {"id": "j1", "name": "morning"}, "revision": None}

    brief = call(engine, "POST", "/v1/wakes/brief", json=wake).json()["brief"]
    bundle = call(engine, "POST", "/v1/bundles", json=job).json()["bundle"]

    for text in (brief, bundle):
        assert "The bins go out on Tuesday." in text
        assert "pot" not in text
        assert "shed" not in text


@pytest.mark.django_db
def test_the_demo_seed_is_household_memories_and_one_private_to_the_demo_member(
    engine: ReferenceEngine, make_user: Any
) -> None:
    demo = make_user("demo")

    seed_demo(engine.state, member=demo_member(), say=print)  # as manage.py memory_engine does

    unattended = get(engine, "/v1/souls/pippa/head")
    theirs = get(engine, "/v1/souls/pippa/head", viewer=str(demo.pk))
    assert len(unattended["items"]) == 2
    assert "blue tin" in unattended["block"]
    assert theirs["items"][:2] == unattended["items"]
    assert "(private) The demo member is planning a surprise" in theirs["block"]
    (item,) = [m.item() for m in engine.state.souls["pippa"].memories if m.scope == "private"]
    assert item["said_by"] == {"member": str(demo.pk), "name": "Demo"}


@pytest.mark.django_db
def test_the_demo_seed_says_it_added_no_private_memory_when_there_is_no_demo_member(
    engine: ReferenceEngine,
) -> None:
    said: list[str] = []

    seed_demo(engine.state, member=demo_member(), say=said.append)

    assert [m.scope for m in engine.state.souls["pippa"].memories] == ["household", "household"]
    assert "no private demo memory was added" in said[0]
