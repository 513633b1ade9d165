"""An update replaces what it corrects, by judgement through the site's real brain door (the
Procfile's gunicorn, signed as the door checks), with a provider double on loopback answering the
``decide`` role: the engine's thinker replaces the older memory after the remember was stored and
acknowledged; the offline vessel keeps both; a failing door keeps both and is tried once more; a
slow door never holds ingest back; a member's private memory is never put before the door for
another member. On both databases."""

import time
from collections.abc import Iterator
from typing import Any

import pytest

from pippa_memory.models import BrainCall
from provider_doubles.deciding import DecidingProvider
from reference_engine.brain_client import BrainClient
from reference_engine.deciding import KEEP_BOTH, NOTHING_CLOSE_NOW, REPLACES
from reference_engine.server import ReferenceEngine
from reference_engine.storage import truth
from tests.support.engine_calls import ALICE, BOB, call, recall, send, turn_event
from tests.support.engine_token import TOKEN
from tests.support.live_servers import ROOT
from tests.support.production_site import DOOR_SECRET
from webui.models import Soul, Vessel

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("production_server")]

LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"


def careful_reader(older: str, newer: str) -> tuple[str, float, str]:
    """Replaces when both name the dentist; else keeps both."""
    if "dentist" in older and "dentist" in newer:
        return REPLACES, 0.93, "The household changed dentist: only the newer is true now."
    return KEEP_BOTH, 0.9, "They say different things."


@pytest.fixture
def provider() -> Iterator[DecidingProvider]:
    """A provider double on loopback reading as :func:`careful_reader`: the site's brain vessel."""
    double = DecidingProvider(careful_reader)
    double.start()
    site(model="local", base_url=double.base_url)
    yield double
    double.close()


def site(adapter: str = "openai_compatible", **fields: Any) -> None:
    Soul.objects.create(slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa"))
    Vessel.objects.create(
        slug="brain", name="Brain", adapter=adapter, brain_priority=1, max_retries=0, **fields
    )


@pytest.fixture
def door_engine(engine_database: str, door_site: str) -> Iterator[ReferenceEngine]:
    """The engine in this process on ``engine_database``, thinking through ``door_site``'s brain
    door, a failed decision tried again at once."""
    brain = BrainClient(f"{door_site}/api/memory/brain/", DOOR_SECRET, timeout=30)
    engine = ReferenceEngine(token=TOKEN, database=engine_database, brain=brain)
    engine.state.thinker.decider.retry_after = 0.0
    yield engine.start()
    engine.stop()


def item(url: str, item_id: str, viewer: str = "7") -> dict[str, Any]:
    found = call(url, "GET", f"/v1/souls/pippa/items/{item_id}", params={"viewer": viewer})
    assert found.status_code == 200, found.text
    return found.json()["item"]


def decisions(engine: ReferenceEngine) -> list[tuple[str, str]]:
    with engine.database.read() as cursor:
        rows = cursor.run("SELECT outcome, brain_call FROM engine_decisions ORDER BY at, id").all()
    return [(str(o), str(b)) for o, b in rows]


def judged_up_to(engine: ReferenceEngine) -> int:
    with engine.database.read() as cursor:
        return truth.checked_seq(cursor, "pippa")


def seq_of(engine: ReferenceEngine, item_id: str) -> int:
    with engine.database.read() as cursor:
        row = cursor.run("SELECT seq FROM engine_items WHERE id = ?", [item_id]).one()
    assert row is not None
    return int(row[0])


def until(check: Any, within: float = 45.0) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"not within {within} s")


def said(url: str, text: str, viewer: Any = ALICE, scope: str = "household") -> str:
    """Remember ``text``; the id of the item it left."""
    assert send(url, turn_event(text, viewer, scope=scope)).status_code == 202
    listed = call(url, "GET", "/v1/souls/pippa/items", params={"viewer": viewer["member"]}).json()
    return next(i["id"] for i in listed["items"] if i["text"] == text)


def test_an_update_replaces_what_it_corrects_through_the_door(
    provider: DecidingProvider, door_engine: ReferenceEngine
) -> None:
    url = door_engine.url
    lund = said(url, LUND)
    pinned = call(url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()
    berg = said(url, BERG)
    said(url, "I like tea")
    again = send(url, turn_event("i like TEA.", ALICE, scope="household"))
    assert again.status_code == 202  # the same words: no new memory, nothing to decide

    replaced = until(lambda: item(url, lund)["superseded_by"])
    assert replaced["id"] == berg
    newer = item(url, berg)
    assert newer["supersedes"]["text"] == LUND
    decision = newer["decision"]
    assert (decision["choice"], decision["confidence"]) == (REPLACES, 0.93)
    assert decision["outcome"] == "replaced"
    assert decision["reason"].startswith("The household changed dentist")
    row = BrainCall.objects.get(webhook_id=decision["brain_call"])
    assert (row.role, row.outcome) == ("decide", BrainCall.Outcome.ANSWERED)
    block = call(url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()["block"]
    assert BERG in block
    assert LUND not in block
    assert block.count("I like tea") == 1
    assert [i["text"] for i in recall(url, "dentist", viewer="7")["items"]] == [BERG]
    old = f"/v1/souls/pippa/blocks/{pinned['revision']}"
    assert call(url, "GET", old, params={"viewer": "7"}).json()["block"] == pinned["block"]
    time.sleep(1.5)  # the thinker has looked at the tea too by now
    assert provider.calls == BrainCall.objects.filter(role="decide").count() == 1


def test_the_offline_vessel_keeps_both_and_says_why(door_engine: ReferenceEngine) -> None:
    site("offline")
    url = door_engine.url
    lund = said(url, LUND)
    berg = said(url, BERG)

    decision = until(lambda: item(url, berg)["decision"])

    assert (decision["outcome"], decision["confidence"]) == ("kept both", 0.0)
    assert item(url, lund)["superseded_by"] is None
    block = call(url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()["block"]
    assert LUND in block
    assert BERG in block


def test_a_failing_door_keeps_both_is_tried_once_more_and_ingest_is_unaffected(
    provider: DecidingProvider, door_engine: ReferenceEngine
) -> None:
    provider.fail = True
    url = door_engine.url
    lund = said(url, LUND)
    said(url, BERG)

    until(lambda: len(decisions(door_engine)) == 2)
    time.sleep(2.0)  # a third try would come within a few rounds
    assert [o for o, _ in decisions(door_engine)] == ["door failed", "door failed"]
    assert item(url, lund)["superseded_by"] is None
    provider.fail, provider.delay = False, 8.0  # now slow: ingest does not wait for it
    try:
        started = time.monotonic()
        for n in range(5):
            visit = turn_event(f"The dentist said floss more, visit {n}", ALICE)
            assert send(url, visit).status_code == 202
        assert time.monotonic() - started < 3.0
    finally:
        provider.delay = 0.0


def test_a_private_memory_is_never_put_before_the_door_for_another_member(
    provider: DecidingProvider, door_engine: ReferenceEngine
) -> None:
    url = door_engine.url
    bobs = said(url, "our dentist is Dr Lund at the Elm Street clinic", BOB, "private")
    forgotten = said(url, "our dentist was Dr Moss at the Elm Street clinic")
    call(url, "DELETE", f"/v1/souls/pippa/items/{forgotten}", params={"viewer": "7"})
    alices = said(url, BERG)

    until(lambda: judged_up_to(door_engine) >= seq_of(door_engine, alices))
    assert "Dr Lund" not in provider.seen()  # Bob's private memory never sent
    assert "Dr Moss" not in provider.seen()  # a forgotten memory is never a candidate
    assert provider.calls == 0  # nothing Alice may see is close: no call at all
    assert item(url, bobs, viewer="8")["superseded_by"] is None
    assert item(url, alices)["decision"] is None


def quoting_reader(older: str, newer: str) -> tuple[str, float, str]:
    """Replaces, giving a reason that quotes both memories (as a vessel's reason often does)."""
    return REPLACES, 0.95, f"'{newer}' says the dentist changed since '{older}'."


def test_a_reason_quoting_a_memory_is_shown_only_to_who_may_see_both(
    door_engine: ReferenceEngine,
) -> None:
    double = DecidingProvider(quoting_reader)
    double.start()
    try:
        site(model="local", base_url=double.base_url)
        url = door_engine.url
        lund = said(url, LUND, BOB)
        berg = said(url, BERG)
        until(lambda: item(url, lund, viewer="8")["superseded_by"])
        assert BERG in item(url, lund, viewer="8")["decision"]["reason"]  # both household

        made = call(
            url, "PATCH", f"/v1/souls/pippa/items/{berg}", json={"viewer": "7", "scope": "private"}
        )
        assert made.status_code == 200, made.text

        orphaned = call(
            url, "GET", "/v1/souls/pippa/items", params={"viewer": "8", "replaced": "orphaned"}
        )
        assert [i["id"] for i in orphaned.json()["items"]] == [lund]
        assert "Berg" not in orphaned.text  # Alice's now private memory, not even in a reason
        bobs = call(url, "GET", f"/v1/souls/pippa/items/{lund}", params={"viewer": "8"})
        assert "Berg" not in bobs.text
        assert bobs.json()["item"]["decision"]["reason"] == truth.REASON_WITHHELD
        assert bobs.json()["item"]["decision"]["outcome"] == "replaced"
        assert BERG in item(url, berg)["decision"]["reason"]  # Alice may see both

        call(url, "DELETE", f"/v1/souls/pippa/items/{berg}", params={"viewer": "7"})
        assert item(url, lund)["decision"]["reason"] == truth.REASON_WITHHELD  # forgotten
    finally:
        double.close()


def test_a_retry_that_finds_its_older_memory_gone_keeps_it_and_is_not_tried_again(
    provider: DecidingProvider, door_engine: ReferenceEngine
) -> None:
    decider = door_engine.state.thinker.decider
    decider.retry_after = 3600.0  # no retry until the older one is forgotten
    provider.fail = True
    url = door_engine.url
    lund = said(url, LUND)
    berg = said(url, BERG)
    until(lambda: decisions(door_engine))
    call(url, "DELETE", f"/v1/souls/pippa/items/{lund}", params={"viewer": "7"})
    decider.retry_after = 0.0

    until(lambda: len(decisions(door_engine)) == 2)
    time.sleep(2.0)  # rounds go on: a memory picked again would be decided again

    assert [o for o, _ in decisions(door_engine)] == ["door failed", "kept both"]
    assert item(url, berg)["decision"]["reason"] == NOTHING_CLOSE_NOW
    assert provider.calls == 1
