"""Memory that stays true through the plug-in's JSON API and the memory page (issue 36), against
the reference engine over its socket on a SQLite file and on PostgreSQL: add (the same words
are one memory), correct (the listing shows what a memory replaced and the stored decision),
restore; a replaced memory whose replacement was forgotten is listed and restorable from the API
and the page; the page's rules and the API's error shape; two members' privacy."""

import uuid
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as, page_as
from tests.support.databases import postgres_settings, postgres_url
from tests.support.engine_token import TOKEN
from tests.support.household_memory import grant_manage_memory, head

pytestmark = pytest.mark.django_db

ITEMS = "/api/memory/items/"
LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(
    request: pytest.FixtureRequest, tmp_path: Path, db: None, django_db_blocker: Any
) -> Iterator[ReferenceEngine]:
    """The reference engine on a socket, on a fresh SQLite file or a PostgreSQL schema."""
    if request.param == "sqlite":
        running = ReferenceEngine(
            token=TOKEN, database=str(tmp_path / "engine.sqlite3"), control=True
        ).start()
        yield running
        running.stop()
        return
    with django_db_blocker.unblock():
        settings = postgres_settings()
    if settings is None:
        pytest.skip("the suite runs on SQLite; CI runs these on PostgreSQL")
    import psycopg

    schema = f"engine_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    running = ReferenceEngine(
        token=TOKEN, database=postgres_url(settings, schema), control=True
    ).start()
    try:
        yield running
    finally:
        running.stop()
        with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def add(client: Any, text: str, scope: str = "household") -> Any:
    return client.post(f"{ITEMS}?soul=pippa", {"text": text, "scope": scope}, format="json")


def correct(client: Any, item: str, text: str) -> Any:
    return client.post(f"{ITEMS}{item}/correct/?soul=pippa", {"text": text}, format="json")


def restore(client: Any, item: str) -> Any:
    return client.post(f"{ITEMS}{item}/restore/?soul=pippa")


def listed(client: Any) -> dict[str, Any]:
    answer = client.get(ITEMS, {"soul": "pippa"})
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_add_correct_and_restore_through_the_api_show_what_was_replaced_and_why(
    memory_on: ReferenceEngine, soul: Any, user: Any
) -> None:
    alice = api_as(user)
    added = add(alice, LUND)
    again = add(alice, "Our dentist is Dr  Lund.")
    assert added.status_code == 201, added.content
    lund = added.json()["item"]
    assert again.json()["item"]["id"] == lund["id"]  # the same words are one memory
    assert (lund["scope"], lund["yours"], lund["may_correct"]) == ("household", True, True)
    pinned = head(memory_on, viewer=user)

    fixed = correct(alice, lund["id"], BERG)

    assert fixed.status_code == 200, fixed.content
    berg = fixed.json()["item"]
    assert berg["text"] == BERG
    assert berg["supersedes"]["id"] == lund["id"]
    assert berg["supersedes"]["text"] == LUND
    decision = berg["decision"]
    assert (decision["outcome"], decision["confidence"]) == ("corrected", 1.0)
    assert decision["choice"] == "the new one replaces the old"
    assert decision["judged_by"] == f"member {user.pk}"
    body = listed(alice)
    assert [i["text"] for i in body["items"]] == [BERG]
    assert body["items"][0]["supersedes"]["text"] == LUND
    assert body["replaced"] == []  # shown under Dr Berg, not on its own
    now = head(memory_on, viewer=user)
    assert (BERG in now["block"], LUND in now["block"], LUND in pinned["block"]) == (
        True,
        False,
        True,
    )

    restored = restore(alice, lund["id"])

    assert restored.status_code == 200, restored.content
    assert restored.json()["item"]["superseded_by"] is None
    assert restored.json()["item"]["decision"]["outcome"] == "restored"
    assert LUND in head(memory_on, viewer=user)["block"]
    assert sorted(i["text"] for i in listed(alice)["items"]) == sorted([LUND, BERG])


def test_a_memory_whose_replacement_was_forgotten_is_listed_and_restored(
    memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any
) -> None:
    alice = api_as(user)
    lund = add(alice, LUND).json()["item"]["id"]
    berg = correct(alice, lund, BERG).json()["item"]["id"]
    assert alice.delete(f"{ITEMS}{berg}/?soul=pippa").status_code == 200

    body = listed(alice)
    page = unescape(page_as(user).get("/memory/?soul=pippa").content.decode())
    bobs_page = unescape(page_as(bob).get("/memory/?soul=pippa").content.decode())

    assert body["items"] == []
    assert [(i["id"], i["may_correct"]) for i in body["replaced"]] == [(lund, True)]
    assert [(i["id"], i["may_correct"]) for i in listed(api_as(bob))["replaced"]] == [(lund, False)]
    assert "Replaced memories" in page
    assert "replaced by a memory since forgotten" in page
    assert f'action="/memory/items/{lund}/restore/"' in page
    assert LUND in bobs_page  # a household memory: Bob sees it, but may not restore it
    assert f'action="/memory/items/{lund}/restore/"' not in bobs_page
    assert restore(api_as(bob), lund).status_code == 403

    restored = page_as(user).post(f"/memory/items/{lund}/restore/", {"soul": "pippa"})

    assert restored.status_code == 302
    assert LUND in head(memory_on, viewer=user)["block"]
    assert listed(alice)["replaced"] == []
    assert [i["id"] for i in listed(alice)["items"]] == [lund]


def test_another_members_private_memories_are_never_shown_corrected_or_restored(
    memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any
) -> None:
    bobs = api_as(bob)
    secret = add(bobs, "Bob's surprise is on Friday", scope="private").json()["item"]["id"]
    newer = correct(bobs, secret, "Bob's surprise is on Saturday").json()["item"]["id"]
    gone = add(bobs, "Bob hid the presents in the shed", scope="private").json()["item"]["id"]
    hidden = correct(bobs, gone, "Bob hid the presents in the loft").json()["item"]["id"]
    assert bobs.delete(f"{ITEMS}{hidden}/?soul=pippa").status_code == 200
    shared = add(bobs, "The boiler code is 4471").json()["item"]["id"]
    manager = grant_manage_memory(user)
    alice = api_as(manager)

    body = listed(alice)
    page = unescape(page_as(manager).get("/memory/?soul=pippa").content.decode())

    for words in ("surprise", "presents"):
        assert words not in str(body)
        assert words not in page
    for item in (secret, newer, gone):
        assert correct(alice, item, "stolen words").status_code == 404
        assert restore(alice, item).status_code == 404
    assert [i["id"] for i in listed(bobs)["replaced"]] == [gone]
    assert "surprise" not in head(memory_on, viewer=user)["block"]
    # A manager may correct a household memory someone else said, as they may forget it.
    assert correct(alice, shared, "The boiler code is 4472").status_code == 200


def test_bad_input_is_refused_by_field_and_changes_nothing(
    memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any
) -> None:
    alice = api_as(user)
    mine = add(alice, LUND).json()["item"]["id"]
    bobs = add(api_as(bob), "Bob plays chess").json()["item"]["id"]
    before = head(memory_on, viewer=user)["revision"]

    answers = {
        "text": [
            add(alice, "   "),
            add(alice, "x" * 2001),
            correct(alice, mine, "Our dentist is Dr Lund."),
            correct(alice, mine, ""),
        ],
        "scope": [add(alice, "tea", scope="everyone"), add(alice, "tea", scope="")],
        "soul": [alice.post(f"{ITEMS}?soul=nobody", {"text": "t", "scope": "private"})],
    }

    for field, refused in answers.items():
        for answer in refused:
            assert answer.status_code == 400, answer.content
            error = answer.json()["error"]
            assert field in error["details"], error
    assert correct(alice, bobs, BERG).json()["error"]["code"] == "not_yours"
    assert restore(alice, "no-such-item").json()["error"]["code"] == "not_found"
    assert restore(alice, "no-such-item").status_code == 404
    assert (
        api_as_anonymous()
        .post(f"{ITEMS}?soul=pippa", {"text": "t", "scope": "private"})
        .status_code
        == 403
    )
    assert head(memory_on, viewer=user)["revision"] == before
    berg = correct(alice, mine, BERG).json()["item"]["id"]
    again = correct(alice, mine, "our dentist is Dr Jones")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "not_current"
    assert [i["id"] for i in listed(alice)["items"]] == [berg, bobs]


def test_with_the_engine_down_nothing_is_added_corrected_or_restored(
    memory_on: ReferenceEngine, soul: Any, user: Any, configure: Any
) -> None:
    alice = api_as(user)
    mine = add(alice, LUND).json()["item"]["id"]
    configure(URL="http://127.0.0.1:9", BREAKER_FAIL_MAX=100)

    for answer in (add(alice, "tea"), correct(alice, mine, BERG), restore(alice, mine)):
        assert answer.status_code == 503, answer.content
        error = answer.json()["error"]
        assert (error["code"], error["details"]["reason"]) == (
            "memory_unavailable",
            "connection_failed",
        )
    configure(URL=memory_on.url)
    assert [i["text"] for i in listed(alice)["items"]] == [LUND]


def api_as_anonymous() -> Any:
    from rest_framework.test import APIClient

    return APIClient()
