"""A replaced memory whose replacement is no longer current for the viewer (issue 36) is listed
with ``replaced=orphaned``, over real sockets on both databases, so it can still be restored:
its replacement forgotten, replaced in turn, or made private to its owner. Never another
member's private one; current and merely replaced memories are not in it; version 2 is refused."""

from typing import Any

import jsonschema

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import call

LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"
ALICE, BOB = "7", "8"


def orphaned(url: str, viewer: str, **params: str) -> list[dict[str, Any]]:
    listed = call(
        url,
        "GET",
        "/v1/souls/pippa/items",
        params={"viewer": viewer, "replaced": "orphaned", **params},
    )
    assert listed.status_code == 200, listed.text
    jsonschema.validate(listed.json(), contract.ITEMS)
    return listed.json()["items"]


def add(url: str, text: str, *, viewer: str = ALICE, scope: str = "household") -> str:
    body = {"viewer": viewer, "name": "Alice" if viewer == ALICE else "Bob", "text": text}
    added = call(url, "POST", "/v1/souls/pippa/items", json={**body, "scope": scope})
    assert added.status_code == 201, added.text
    return added.json()["item"]["id"]


def correct(url: str, item: str, text: str, *, viewer: str = ALICE) -> str:
    body = {"viewer": viewer, "name": "Alice", "text": text}
    fixed = call(url, "POST", f"/v1/souls/pippa/items/{item}/correct", json=body)
    assert fixed.status_code == 200, fixed.text
    return fixed.json()["item"]["id"]


def forget(url: str, item: str, *, viewer: str = ALICE) -> None:
    gone = call(url, "DELETE", f"/v1/souls/pippa/items/{item}", params={"viewer": viewer})
    assert gone.status_code == 200, gone.text


def test_a_replaced_memory_whose_replacement_was_forgotten_is_listed_and_restorable(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    lund = add(url, LUND)
    berg = correct(url, lund, BERG)
    assert orphaned(url, ALICE) == []  # shown under Dr Berg, not on its own

    forget(url, berg)

    listed = orphaned(url, ALICE)
    assert [i["id"] for i in listed] == [lund]
    assert listed[0]["superseded_by"] is None
    assert listed[0]["decision"]["outcome"] == "corrected"
    assert [i["id"] for i in orphaned(url, BOB)] == [lund]  # a household memory: Bob sees it
    current = call(url, "GET", "/v1/souls/pippa/items", params={"viewer": ALICE}).json()
    assert lund not in [i["id"] for i in current["items"]]  # not current: the head lacks it
    restored = call(url, "POST", f"/v1/souls/pippa/items/{lund}/restore", json={"viewer": ALICE})
    assert restored.status_code == 200, restored.text
    assert orphaned(url, ALICE) == []
    assert (
        LUND in call(url, "GET", "/v1/souls/pippa/head", params={"viewer": ALICE}).json()["block"]
    )


def test_another_members_private_replaced_memory_is_never_listed_for_anyone_else(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    secret = add(url, "Bob's surprise is on Friday", viewer=BOB, scope="private")
    newer = correct(url, secret, "Bob's surprise is on Saturday", viewer=BOB)
    forget(url, newer, viewer=BOB)

    assert orphaned(url, ALICE) == []
    assert [i["id"] for i in orphaned(url, BOB)] == [secret]
    stolen = call(url, "POST", f"/v1/souls/pippa/items/{secret}/restore", json={"viewer": ALICE})
    assert stolen.status_code == 404
    assert [i["id"] for i in orphaned(url, BOB)] == [secret]  # nothing changed


def test_replaced_in_turn_or_made_private_leaves_the_older_one_on_its_own(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    first = add(url, "the bins go out on Monday")
    second = correct(url, first, "the bins go out on Tuesday")
    correct(url, second, "the bins go out on Wednesday")
    lund = add(url, LUND)
    berg = correct(url, lund, BERG)
    private = call(
        url,
        "PATCH",
        f"/v1/souls/pippa/items/{berg}",
        json={"viewer": ALICE, "scope": "private"},
    )
    assert private.status_code == 200, private.text

    assert [i["id"] for i in orphaned(url, ALICE)] == [first]  # Dr Berg is still Alice's
    assert [i["id"] for i in orphaned(url, BOB)] == [lund, first]  # Bob no longer sees Dr Berg
    assert [i["id"] for i in orphaned(url, BOB, limit="1")] == [lund]


def test_version_2_and_a_bad_value_are_refused(durable_engine: ReferenceEngine) -> None:
    url = durable_engine.url
    params = {"viewer": ALICE, "replaced": "orphaned"}
    old = call(url, "GET", "/v1/souls/pippa/items", params=params, version="2")
    bad = call(url, "GET", "/v1/souls/pippa/items", params={**params, "replaced": "all"})

    assert old.status_code == 400
    assert bad.status_code == 400
    assert bad.json()["error"]["details"][0]["field"] == "replaced"
