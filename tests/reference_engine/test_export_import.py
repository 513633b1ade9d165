"""Contract v3's export and import routes on the reference engine, over a socket, on SQLite and
PostgreSQL: every live memory paged out oldest first with its owner and history (never a forgotten
one), and batches taken in idempotently by id, all or nothing, the head moving forward."""

from typing import Any

import jsonschema

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, BOB, call, send, turn_event


def exported(url: str, *, limit: int = 100) -> list[dict[str, Any]]:
    """Every item the export route pages out, page by page."""
    items, after = [], ""
    while True:
        params = {"limit": limit, **({"after": after} if after else {})}
        answer = call(url, "GET", "/v1/souls/pippa/export", params=params)
        assert answer.status_code == 200, answer.text
        jsonschema.validate(answer.json(), contract.EXPORT_PAGE)
        items += answer.json()["items"]
        after = answer.json()["next"]
        if after is None:
            return items


def imported(url: str, items: list[dict[str, Any]], soul: str = "pippa") -> Any:
    return call(url, "POST", f"/v1/souls/{soul}/import", json={"items": items})


def test_export_pages_every_live_memory_of_every_member_oldest_first_never_a_forgotten_one(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    for n in range(5):
        send(url, turn_event(f"Alice secret {n}", ALICE, scope="private"))
    send(url, turn_event("Bob plays chess", BOB, scope="household"))
    send(url, turn_event("Bob forgets this", BOB, scope="private"))
    doomed = durable_engine.state.souls["pippa"].memories[-1].id
    call(url, "DELETE", f"/v1/souls/pippa/items/{doomed}", params={"viewer": "8"})

    items = exported(url, limit=2)
    first = call(url, "GET", "/v1/souls/pippa/export", params={"limit": 2}).json()

    assert [i["text"] for i in items] == [f"Alice secret {n}" for n in range(5)] + [
        "Bob plays chess"
    ]
    assert first["total"] == 6
    assert items[0]["said_by"] == ALICE
    assert items[0]["scope"] == "private"
    assert items[0]["history"] == [{"revision": "r1", "change": "scope", "to": "private"}]
    assert doomed not in {i["id"] for i in items}


def test_export_carries_scope_and_keep_changes_in_the_history(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    send(url, turn_event("Alice likes tea", ALICE, scope="private"))
    item = durable_engine.state.souls["pippa"].memories[0].id
    path = f"/v1/souls/pippa/items/{item}"
    call(url, "PATCH", path, json={"viewer": "7", "scope": "household"})
    call(url, "PATCH", path, json={"viewer": "7", "keep": True})

    (only,) = exported(url)

    assert (only["scope"], only["keep"]) == ("household", True)
    assert only["history"] == [
        {"revision": "r1", "change": "scope", "to": "private"},
        {"revision": "r2", "change": "scope", "to": "household"},
        {"revision": "r3", "change": "keep", "to": True},
    ]


def test_import_adds_by_id_once_and_a_second_run_doubles_nothing(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    send(url, turn_event("Already here", ALICE, scope="household"))
    items = [
        {
            "id": f"m-import-{n}",
            "text": f"Imported memory {n}",
            "at": f"2025-01-0{n + 1}T10:00:00Z",
            "scope": "private" if n % 2 else "household",
            "said_by": ALICE if n % 2 else None,
            "source": {"conversation": None, "message": None, "tool_use": None},
            "keep": n == 2,
            "history": [],
        }
        for n in range(4)
    ]

    checked = call(url, "POST", "/v1/souls/pippa/import", json={"items": items, "check_only": True})
    first = imported(url, items[:2])
    second = imported(url, items)
    third = imported(url, items)

    assert first.status_code == second.status_code == third.status_code == 200
    jsonschema.validate(first.json(), contract.IMPORTED)
    assert checked.json()["added"] == 4
    assert checked.json()["revision"] == "r1"  # checked only: nothing kept, the head stays
    assert (first.json()["added"], first.json()["present"]) == (2, 0)
    assert (second.json()["added"], second.json()["present"]) == (2, 2)
    assert (third.json()["added"], third.json()["present"]) == (0, 4)
    assert (first.json()["revision"], second.json()["revision"]) == ("r2", "r3")
    assert third.json()["revision"] == "r3"  # nothing added: the head stays
    kept = {m.id: m for m in durable_engine.state.souls["pippa"].memories}
    assert len(kept) == 5
    assert kept["m-import-1"].scope == "private"
    assert kept["m-import-1"].owner == "7"
    assert kept["m-import-1"].at == "2025-01-02T10:00:00Z"
    assert kept["m-import-2"].keep is True
    mine = call(
        url, "POST", "/v1/recall", json={"soul": "pippa", "query": "Imported", "viewer": "8"}
    )
    assert "m-import-1" not in {i["id"] for i in mine.json()["items"]}  # still Alice's only


def test_an_import_keeps_the_same_words_of_one_owner_in_one_scope_once(
    durable_engine: ReferenceEngine,
) -> None:
    """A fresh engine seeded with the demo memories, then an export of the old one imported: the
    words it keeps already are one memory each, as a remember of them would be; the same words of
    another owner or in another scope stay their own."""
    url = durable_engine.url
    send(url, turn_event("The household's tea is in the blue tin.", ALICE, scope="household"))

    def item(n: int, text: str, scope: str, said_by: Any) -> dict[str, Any]:
        return {
            "id": f"m-old-{n}",
            "text": text,
            "at": "2025-01-01T10:00:00Z",
            "scope": scope,
            "said_by": said_by,
            "source": {"conversation": None, "message": None, "tool_use": None},
            "keep": False,
            "history": [],
        }

    answer = imported(
        url,
        [
            item(1, "the household's TEA is in the blue tin", "household", ALICE),  # kept already
            item(2, "The household's tea is in the blue tin.", "private", ALICE),  # another scope
            item(3, "The household's tea is in the blue tin.", "household", BOB),  # another owner
            item(4, "Bob plays chess", "household", BOB),
            item(5, "Bob plays chess!", "household", BOB),  # the same words twice in one batch
        ],
    )

    assert answer.status_code == 200, answer.text
    assert (answer.json()["added"], answer.json()["present"]) == (3, 2)
    kept = {m.id for m in durable_engine.state.souls["pippa"].memories}
    assert {"m-old-2", "m-old-3", "m-old-4"} <= kept
    assert not {"m-old-1", "m-old-5"} & kept


def test_a_conflicting_batch_is_400_naming_the_item_and_keeps_nothing(
    durable_engine: ReferenceEngine,
) -> None:
    url = durable_engine.url
    send(url, turn_event("Alice likes tea", ALICE, scope="household"))
    kept = durable_engine.state.souls["pippa"].memories[0]
    fresh = {
        "id": "m-new",
        "text": "New one",
        "at": "2025-01-01T00:00:00Z",
        "scope": "household",
        "said_by": None,
        "source": {"conversation": None, "message": None, "tool_use": None},
        "keep": False,
    }
    other_text = {**fresh, "id": kept.id, "text": "Alice likes coffee"}
    twice = {**fresh, "text": "New one, said otherwise"}
    no_owner = {**fresh, "id": "m-private", "scope": "private"}

    answers = [
        imported(url, [fresh, other_text]),
        imported(url, [fresh, twice]),
        imported(url, [fresh, no_owner]),
    ]

    codes = [(a.status_code, a.json()["error"]["code"]) for a in answers]
    assert codes == [(400, "import_conflict"), (400, "import_conflict"), (409, "no_owner")]
    assert kept.id in answers[0].json()["error"]["message"]
    assert "m-new" in answers[1].json()["error"]["message"]
    assert [m.id for m in durable_engine.state.souls["pippa"].memories] == [kept.id]
    assert durable_engine.state.head("pippa") == "r1"
    imported(url, [fresh])
    moved = imported(url, [{**fresh, "text": "changed"}], soul="other")
    assert moved.status_code == 400
    assert "another soul" in moved.json()["error"]["message"]


def test_a_forgotten_id_stays_forgotten_on_import(durable_engine: ReferenceEngine) -> None:
    url = durable_engine.url
    send(url, turn_event("Alice likes tea", ALICE, scope="private"))
    item = exported(url)[0]
    call(url, "DELETE", f"/v1/souls/pippa/items/{item['id']}", params={"viewer": "7"})

    answer = imported(url, [item])

    assert answer.json()["forgotten"] == 1
    assert answer.json()["added"] == 0
    assert durable_engine.state.souls["pippa"].memories == []


def test_version_2_callers_have_no_export_or_import(durable_engine: ReferenceEngine) -> None:
    url = durable_engine.url
    assert call(url, "GET", "/v1/souls/pippa/export", version="2").status_code == 404
    batch = {"items": [{"id": "m1"}]}
    assert call(url, "POST", "/v1/souls/pippa/import", json=batch, version="2").status_code == 400


def test_an_import_lands_past_the_revision_the_export_came_from(
    durable_engine: ReferenceEngine,
) -> None:
    item = {
        "id": "m-far",
        "text": "From an older engine",
        "at": "2025-01-01T00:00:00Z",
        "scope": "household",
        "said_by": None,
        "source": {"conversation": None, "message": None, "tool_use": None},
        "keep": False,
    }
    body = {"items": [item], "after_revision": "r40"}

    answer = call(durable_engine.url, "POST", "/v1/souls/pippa/import", json=body)
    again = call(durable_engine.url, "POST", "/v1/souls/pippa/import", json=body)

    assert answer.json()["revision"] == "r41"  # no revision the old engine gave is named again
    assert again.json()["revision"] == "r41"
    head = call(durable_engine.url, "GET", "/v1/souls/pippa/head").json()
    assert head["revision"] == "r41"
    assert head["items"] == ["m-far"]
