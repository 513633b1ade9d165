"""One memory per fact (issue 36), over real sockets on both databases: the same words kept once
(and across a restart), a private memory repeating a household one stays its own; a member's
correction replaces a memory and restore brings it back; a replaced memory leaves later blocks,
recall, briefs and bundles, while a pinned revision keeps its bytes; version 2 sees current
memories only."""

from typing import Any

import jsonschema

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, BOB, call, recall, send, turn_event
from tests.support.engine_token import TOKEN

LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"
TEA = "I like tea"


def head(url: str, viewer: str | None = "7") -> dict[str, Any]:
    params = {"viewer": viewer} if viewer else {}
    return call(url, "GET", "/v1/souls/pippa/head", params=params).json()


def items(url: str, viewer: str = "7", version: str = "3") -> list[dict[str, Any]]:
    listed = call(url, "GET", "/v1/souls/pippa/items", params={"viewer": viewer}, version=version)
    assert listed.status_code == 200, listed.text
    return listed.json()["items"]


def add(url: str, text: str, *, viewer: str | None = "7", scope: str = "household") -> Any:
    body = {"viewer": viewer, "name": "Alice", "text": text, "scope": scope}
    return call(url, "POST", "/v1/souls/pippa/items", json=body)


def corrected_by_alice(url: str) -> tuple[str, dict[str, Any]]:
    """Lund remembered, then corrected by Alice to Berg: Lund's path, and Berg's item."""
    lund = add(url, LUND).json()["item"]
    path = f"/v1/souls/pippa/items/{lund['id']}"
    berg = call(url, "POST", f"{path}/correct", json={"viewer": "7", "text": BERG}).json()["item"]
    return path, berg


def test_the_same_words_are_one_memory_made_the_most_recent_and_the_event_counted_once(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    first = turn_event(TEA, ALICE, scope="household")
    assert send(url, first).status_code == 202
    assert send(url, turn_event("Bob plays chess", BOB, scope="household")).status_code == 202
    listed = items(url)
    tea_id = next(i["id"] for i in listed if i["text"] == TEA)
    before = head(url)
    again = turn_event("  i LIKE   tea!! ", ALICE, scope="household")
    assert send(url, again).status_code == 202
    assert send(url, again).json() == {"id": again["id"], "duplicate": True}  # once by its id

    after = head(url)
    lines = [line for line in after["block"].split("\n") if "tea" in line.lower()]
    assert lines == [f"- {TEA}"]  # no second line
    assert [i["id"] for i in items(url) if "tea" in i["text"].lower()] == [tea_id]  # no second row
    assert after["revision"] != before["revision"]  # made the most recent: the head moved
    assert after["items"].count(tea_id) == 1
    added = add(url, "I like tea.")
    assert added.status_code == 201, added.text
    jsonschema.validate(added.json(), contract.ITEM_FOUND)
    assert added.json()["item"]["id"] == tea_id  # the page's add answers the same memory
    with durable_engine.database.read() as cursor:
        count = cursor.run("SELECT count(*) FROM engine_items WHERE text LIKE ?", ["%tea%"]).one()
    assert count is not None
    assert int(count[0]) == 1


def test_the_same_words_stay_one_memory_across_a_restart(engine_database: str) -> None:
    engine = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        assert send(engine.url, turn_event(TEA, ALICE, scope="household")).status_code == 202
    finally:
        engine.stop()
    again = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        assert (
            send(again.url, turn_event("I like tea.", ALICE, scope="household")).status_code == 202
        )
        assert [i["text"] for i in items(again.url)] == [TEA]
    finally:
        again.stop()


def test_a_private_memory_repeating_a_household_one_stays_its_own_and_owners_stay_apart(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    send(url, turn_event(TEA, ALICE, scope="household"))
    send(url, turn_event(TEA, ALICE, scope="private"))
    send(url, turn_event(TEA, BOB, scope="private"))

    alices = items(url, "7")
    bobs = items(url, "8")
    assert sorted(i["scope"] for i in alices) == ["household", "private"]
    assert sorted(i["scope"] for i in bobs) == ["household", "private"]
    assert {i["id"] for i in alices} & {i["id"] for i in bobs} == {
        next(i["id"] for i in alices if i["scope"] == "household")
    }  # Bob's private tea is his own, never Alice's


def test_a_correction_replaces_the_memory_and_restore_brings_it_back(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    lund = add(url, LUND).json()["item"]
    pinned = head(url)
    pinned_alone = head(url, viewer=None)
    path = f"/v1/souls/pippa/items/{lund['id']}"

    corrected = call(url, "POST", f"{path}/correct", json={"viewer": "7", "text": BERG})

    assert corrected.status_code == 200, corrected.text
    jsonschema.validate(corrected.json(), contract.ITEM_FOUND)
    berg = corrected.json()["item"]
    assert berg["text"] == BERG
    assert berg["supersedes"]["id"] == lund["id"]
    assert berg["supersedes"]["text"] == LUND
    assert berg["decision"]["outcome"] == "corrected"
    now = head(url)
    assert BERG in now["block"]
    assert LUND not in now["block"]
    again = call(url, "GET", f"/v1/souls/pippa/blocks/{pinned['revision']}", params={"viewer": "7"})
    assert again.json()["block"] == pinned["block"]  # the pinned revision keeps its bytes
    assert LUND in again.json()["block"]
    assert [i["text"] for i in recall(url, "dentist", viewer="7")["items"]] == [BERG]
    assert [i["text"] for i in items(url)] == [BERG]
    brief = call(url, "POST", "/v1/wakes/brief", json={"soul": "pippa"}).json()
    assert LUND not in brief["brief"]
    assert BERG in brief["brief"]
    job = {"id": "j1", "name": "Morning", "kind": "scheduled"}
    bundle = call(url, "POST", "/v1/bundles", json={"soul": "pippa", "job": job}).json()
    assert LUND not in bundle["bundle"]
    assert BERG in bundle["bundle"]
    old = call(url, "GET", f"/v1/souls/pippa/blocks/{pinned_alone['revision']}").json()
    assert old["block"] == pinned_alone["block"]
    found = call(url, "GET", path, params={"viewer": "7"}).json()["item"]
    assert found["superseded_by"]["id"] == berg["id"]  # in history, saying what replaced it
    twice = call(url, "POST", f"{path}/correct", json={"viewer": "7", "text": "Dr Who"})
    assert twice.status_code == 409
    assert twice.json()["error"]["code"] == "not_current"

    restored = call(url, "POST", f"{path}/restore", json={"viewer": "7"})

    assert restored.status_code == 200, restored.text
    assert restored.json()["item"]["superseded_by"] is None
    assert restored.json()["revision"] != now["revision"]  # the head moved
    assert sorted(i["text"] for i in items(url)) == sorted([LUND, BERG])
    assert LUND in head(url)["block"]
    assert (
        call(
            url, "GET", f"/v1/souls/pippa/blocks/{now['revision']}", params={"viewer": "7"}
        ).json()["block"]
        == now["block"]
    )  # the revision made while it was replaced keeps its bytes too


def test_forgetting_the_newer_does_not_bring_the_older_back(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    path, berg = corrected_by_alice(url)

    forgotten = call(url, "DELETE", f"/v1/souls/pippa/items/{berg['id']}", params={"viewer": "7"})

    assert forgotten.status_code == 200
    assert items(url) == []
    assert "dentist" not in head(url)["block"]
    restored = call(url, "POST", f"{path}/restore", json={"viewer": "7"})
    assert restored.status_code == 200  # still in history: the member may restore it
    assert [i["text"] for i in items(url)] == [LUND]


def test_a_private_memory_of_another_member_can_be_neither_corrected_nor_restored(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    mine = add(url, LUND, scope="private").json()["item"]
    path = f"/v1/souls/pippa/items/{mine['id']}"

    theirs = call(url, "POST", f"{path}/correct", json={"viewer": "8", "text": BERG})
    restore = call(url, "POST", f"{path}/restore", json={"viewer": "8"})

    assert theirs.status_code == restore.status_code == 404
    assert [i["text"] for i in items(url)] == [LUND]


def test_bad_input_is_refused_and_changes_nothing(durable_engine: ReferenceEngine) -> None:
    url = durable_engine.url
    lund = add(url, LUND).json()["item"]
    before = head(url)["revision"]
    path = f"/v1/souls/pippa/items/{lund['id']}"

    empty = call(url, "POST", f"{path}/correct", json={"viewer": "7", "text": "   "})
    same = call(
        url, "POST", f"{path}/correct", json={"viewer": "7", "text": "Our dentist is Dr Lund."}
    )
    long = add(url, "x" * 2001)
    nobody = add(url, "a secret", viewer=None, scope="private")
    old = call(url, "POST", f"{path}/restore", json={"viewer": "7"}, version="2")

    assert empty.status_code == 400
    assert empty.json()["error"]["code"] == "invalid_text"
    assert same.status_code == 400
    assert same.json()["error"]["code"] == "same_words"
    assert long.status_code == 400
    assert nobody.status_code == 409
    assert old.status_code == 404  # version 2 has no such route
    assert head(url)["revision"] == before


def test_version_2_sees_current_memories_only_without_the_new_fields(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    corrected_by_alice(url)

    listed = items(url, version="2")

    assert [i["text"] for i in listed] == [BERG]
    assert not {"supersedes", "superseded_by", "decision", "keep"} & set(listed[0])
    body = {"soul": "pippa", "query": "dentist", "viewer": "7"}
    found = call(url, "POST", "/v1/recall", json=body, version="2").json()
    assert [i["text"] for i in found["items"]] == [BERG]
