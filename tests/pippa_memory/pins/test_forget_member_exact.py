"""Forget-member is exact, however many items the member said: every one of them leaves every
later prompt, recall and page, whether the engine's answer came (it lists the ``ids`` it forgot)
or was lost (what the plug-in read first, every page of it, is treated as forgotten). Against the
reference engine over a socket, with more items than many listing pages hold."""

import json
from typing import Any

import pytest

from pippa_memory.forgotten_text import CUT_OUT
from pippa_memory.models import ItemTombstone, OutboxEvent
from pippa_memory.outbox.delivery import deliver_due
from reference_engine.server import ReferenceEngine
from reference_engine.storage import memories as engine_rows
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, grant_manage_memory
from tests.support.lost_answers import CHANGES, SECRET, api_listing, assert_nowhere_for
from tests.support.memory_turns import started
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

#: More of one member's items than the listing's pages of 100 hold, and more than 50 of them.
MANY = 5_050


def said_many(engine: ReferenceEngine, member: Any, count: int) -> None:
    """``count`` household items said by ``member``, written straight into the engine's database
    in one transaction (the control door would take one request each)."""
    said_by = {"member": str(member.pk), "name": member.get_username()}
    with engine.state.database.write() as cursor:
        for number in range(count):
            engine_rows.add_memory(
                cursor, "pippa", text=f"Bob's note {number}.", scope="household",
                said_by=said_by, source={},
            )  # fmt: skip


@pytest.mark.parametrize("answer", ["confirmed", "lost_after_applying"])
def test_forgetting_a_member_with_more_items_than_the_listing_pages_hold_forgets_every_one(
    memory_on: ReferenceEngine, user: Any, make_user: Any, make_conversation: Any,
    sent_requests: list[Any], answer: str,
) -> None:  # fmt: skip
    bob = make_user("bob")
    oldest = add_memory(memory_on, SECRET, by=bob)
    alices = started(make_conversation(viewer=user))
    assert SECRET in sent_requests[-1]["system"]
    # Bob told his own chat too; its turn event (with the remember) is not delivered yet.
    run_turn(conversation=make_conversation(viewer=bob), text=f"remember {SECRET}")
    said_many(memory_on, bob, MANY)
    manager = grant_manage_memory(make_user("carol", is_staff=True))
    if answer != "confirmed":
        path = f"/v1/souls/pippa/members/{bob.pk}/forget"
        memory_on.set_fault("reset", paths=[path], methods=CHANGES, times=1)

    response = api_as(manager).post(f"/api/memory/members/{bob.pk}/forget/?soul=pippa")
    deliver_due(limit=10)

    assert response.status_code in (200, 202), response.content
    assert response.json()["forgotten"] == MANY + 1
    assert response.json()["confirmed"] is (answer == "confirmed")
    assert ItemTombstone.objects.filter(item_id=oldest).exists()
    assert ItemTombstone.objects.count() == MANY + 1
    payloads = json.dumps(list(OutboxEvent.objects.values_list("payload", flat=True)))
    assert SECRET not in payloads
    assert CUT_OUT in payloads
    assert_nowhere_for(user, SECRET, alices, sent_requests, make_conversation)


def test_forgetting_a_member_tombstones_exactly_the_ids_the_engine_lists(
    memory_on: ReferenceEngine, user: Any, make_user: Any, make_conversation: Any
) -> None:
    bob = make_user("bob")
    read_first = add_memory(memory_on, "Bob feeds the cat.", by=bob)
    kept = add_memory(memory_on, "Alice waters the plants.", by=user)
    said_between = "m-said-between"
    listing = {"forgotten": 1, "ids": [said_between], "revision": "r9"}
    path = f"/v1/souls/pippa/members/{bob.pk}/forget"
    memory_on.set_fault("wrong_shape", paths=[path], body=listing)
    manager = grant_manage_memory(make_user("carol", is_staff=True))

    response = api_as(manager).post(f"/api/memory/members/{bob.pk}/forget/?soul=pippa")

    assert response.status_code == 200, response.content
    assert response.json()["forgotten"] == 1
    assert list(ItemTombstone.objects.values_list("item_id", flat=True)) == [said_between]
    assert read_first != said_between
    assert kept in [item["id"] for item in json.loads(api_listing(user))["items"]]
