"""Contract version 3 on the reference engine, and version 2 callers answered as before."""

from typing import Any

import jsonschema
import requests

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, BOB, call, recall, send, turn_event


def remembered(engine: ReferenceEngine) -> dict[str, Any]:
    send(engine.url, turn_event("Alice likes tea", ALICE, scope="private"))
    send(engine.url, turn_event("Alice waters the plants", ALICE, scope="household"))
    send(engine.url, turn_event("Bob plays chess", BOB, scope="household"))
    return {i["text"]: i["id"] for i in recall(engine.url, "tea plants chess", viewer="7")["items"]}


def alices_tea(engine: ReferenceEngine) -> str:
    """The path of Alice's private memory, once the engine has :func:`remembered`."""
    return f"/v1/souls/pippa/items/{remembered(engine)['Alice likes tea']}"


def by_each_caller(
    engine: ReferenceEngine, method: str, path: str
) -> tuple[requests.Response, requests.Response, requests.Response]:
    """``method`` on ``path`` as Alice, as Bob, then as Alice through contract version 2."""
    return (
        call(engine.url, method, path, params={"viewer": "7"}),
        call(engine.url, method, path, params={"viewer": "8"}),
        call(engine.url, method, path, params={"viewer": "7"}, version="2"),
    )


def test_one_item_is_found_by_its_id_for_a_viewer_who_may_see_it(
    durable_engine: ReferenceEngine,
) -> None:
    mine, theirs, old = by_each_caller(durable_engine, "GET", alices_tea(durable_engine))

    assert mine.status_code == 200
    jsonschema.validate(mine.json(), contract.ITEM_FOUND)
    assert mine.json()["item"]["text"] == "Alice likes tea"
    assert theirs.status_code == 404  # private to Alice: not told apart from no item
    assert old.status_code == 404  # version 2 had no such route


def test_forget_member_lists_the_ids_it_forgot(durable_engine: ReferenceEngine) -> None:
    ids = remembered(durable_engine)
    path = "/v1/souls/pippa/members/7/forget"

    answer = call(durable_engine.url, "POST", path)

    jsonschema.validate(answer.json(), contract.FORGOTTEN_MEMBER)
    assert answer.json()["forgotten"] == 2
    assert sorted(answer.json()["ids"]) == sorted(
        [ids["Alice likes tea"], ids["Alice waters the plants"]]
    )
    again = call(durable_engine.url, "POST", path, version="2").json()
    assert again == {"forgotten": 0, "revision": answer.json()["revision"]}  # v2: no ids


def test_forgetting_a_forgotten_item_is_a_success_for_version_3(
    durable_engine: ReferenceEngine,
) -> None:
    path = alices_tea(durable_engine)

    first = call(durable_engine.url, "DELETE", path, params={"viewer": "7"})
    retry, stranger, old = by_each_caller(durable_engine, "DELETE", path)

    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()
    assert stranger.status_code == 404
    assert old.status_code == 404  # version 2 as before


def test_briefs_and_bundles_name_the_items_they_were_built_from(
    durable_engine: ReferenceEngine,
) -> None:
    ids = remembered(durable_engine)
    household = sorted([ids["Alice waters the plants"], ids["Bob plays chess"]])
    job = {"id": "j1", "name": "Morning", "kind": "scheduled"}

    brief = call(durable_engine.url, "POST", "/v1/wakes/brief", json={"soul": "pippa"}).json()
    bundle = call(durable_engine.url, "POST", "/v1/bundles", json={"soul": "pippa", "job": job})
    old_brief = call(
        durable_engine.url, "POST", "/v1/wakes/brief", json={"soul": "pippa"}, version="2"
    ).json()

    jsonschema.validate(brief, contract.BRIEF)
    jsonschema.validate(bundle.json(), contract.BUNDLE)
    assert sorted(brief["items"]) == household
    assert brief["viewer"] is None
    assert sorted(bundle.json()["items"]) == household
    assert bundle.json()["viewer"] is None
    assert set(old_brief) == {"brief", "revision"}


def test_an_unknown_contract_version_is_refused(durable_engine: ReferenceEngine) -> None:
    answer = call(durable_engine.url, "GET", "/v1/souls/pippa/head", version="4")
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "unsupported_contract")
