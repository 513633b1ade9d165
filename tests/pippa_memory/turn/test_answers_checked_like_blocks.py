"""An ask's answer is checked like a block (issue 35, point 1): the adversary's reproduction.

Alice makes a household memory private and the engine does not confirm it: it fails before
applying the change (a 503), or applies it late (after the site stopped waiting). Bob then asks
about it. The engine thinks through the site's brain door (a live server, signed as in
production) on the offline vessel. Nothing of the memory reaches the door's vessel request, Bob's
prompt, or Bob's page: the door leaves out what this site tombstoned for Bob, and the answer,
which names the memories it was made from, is withheld when it holds one. Against the reference
engine over a socket; the site's database is SQLite or PostgreSQL as the suite runs.
"""

import json
import time
from typing import Any

import pytest
from django.core.cache import cache

from pippa_memory.models import BrainCall, PendingAsk
from pippa_memory.turn.answers import ANSWER_WITHHELD_AFTER_FORGET
from reference_engine.brain_client import BrainClient
from reference_engine.server import ReferenceEngine
from tests.support.brain_door import NEW_SECRET
from tests.support.clients import api_as
from tests.support.engine_token import TOKEN
from tests.support.household_memory import add_memory
from webui.models import Conversation, Vessel
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

CODE = "249814"
ALARM = f"The alarm code is {CODE}."
#: How the engine does not confirm the make-private: it fails first, or applies it late.
UNCONFIRMED = {"failed_before": ("error", {"status": 503}), "applied_late": ("latency", {})}


@pytest.fixture
def thinking_engine(live_server: Any, configure: Any, offline_vessel: Vessel) -> Any:
    """The reference engine thinking through this site's brain door, memory pointed at it."""
    cache.clear()  # the door's throttle counters
    offline_vessel.brain_priority = 1
    offline_vessel.save(update_fields=["brain_priority"])
    brain = BrainClient(f"{live_server.url}/api/memory/brain/", NEW_SECRET, timeout=10)
    running = ReferenceEngine(token=TOKEN, answer_delay=0.0, control=True, brain=brain).start()
    configure(URL=running.url, BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="1000/min", MANAGE_BUDGET=1.0)
    yield running
    running.stop()


def make_private_unconfirmed(engine: ReferenceEngine, alice: Any, item: str, case: str) -> None:
    mode, options = UNCONFIRMED[case]
    if mode == "latency":
        options = {"seconds": 2.5}  # past the page's budget of 1 s: applied after it gave up
    engine.set_fault(mode, paths=[f"/v1/souls/pippa/items/{item}"], methods=["PATCH"], times=1,
                     **options)  # fmt: skip
    response = api_as(alice).patch(
        f"/api/memory/items/{item}/?soul=pippa", {"scope": "private"}, format="json"
    )
    assert response.status_code == 202, response.content
    assert response.json()["confirmed"] is False


def door_calls_for(ask_id: str, *, within: float = 20) -> list[BrainCall]:
    """The brain door's answered calls for ``ask_id``, once there is one."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        calls = list(BrainCall.objects.filter(webhook_id__startswith=f"engine_{ask_id}_"))
        if any(call.outcome == BrainCall.Outcome.ANSWERED for call in calls):
            return calls
        time.sleep(0.2)
    pytest.fail(f"the engine never asked the door about {ask_id}")


def answered_by_engine(engine: ReferenceEngine, conversation: Conversation) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(ask["answer_id"] for ask in engine_asks(engine, conversation)):
            return
        time.sleep(0.2)
    pytest.fail("the engine never wrote the answer")


def engine_asks(engine: ReferenceEngine, conversation: Conversation) -> list[dict[str, Any]]:
    from reference_engine.storage import asks

    with engine.database.read() as cursor:
        return asks.open_asks(cursor, str(conversation.id))


@pytest.mark.parametrize("case", UNCONFIRMED)
def test_bobs_ask_after_alices_unconfirmed_make_private_carries_nothing_of_it(
    thinking_engine: ReferenceEngine, user: Any, make_user: Any, make_conversation: Any,
    sent_requests: list[dict[str, Any]], case: str,
) -> None:  # fmt: skip
    alice, bob = user, make_user("bob")
    item = add_memory(thinking_engine, ALARM, by=alice)
    make_private_unconfirmed(thinking_engine, alice, item, case)
    chat = make_conversation(viewer=bob)

    run_turn(conversation=chat, text="ask what is the alarm code")
    ask_id = PendingAsk.objects.get(conversation=chat).ask_id
    door_calls_for(ask_id)
    answered_by_engine(thinking_engine, chat)
    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="any news?")

    assert len(sent_requests) >= 3  # Bob's two turns and the door's vessel request at least
    assert CODE not in json.dumps(sent_requests)  # no vessel request: the door's, nor Bob's
    page = api_as(bob).get(f"/api/conversations/{chat.id}/messages/")
    assert page.status_code == 200
    assert CODE not in page.content.decode()
    said = PendingAsk.objects.get(conversation=chat)
    assert said.delivered_with is not None  # an answer rode: withheld, or made without it
    assert CODE not in said.answer
    if case == "failed_before":  # the engine still offers it: the answer names it, and is held
        assert said.answer == ANSWER_WITHHELD_AFTER_FORGET


def test_alice_still_hears_her_own_memory_made_private_through_the_door(
    thinking_engine: ReferenceEngine, user: Any, make_conversation: Any,
    sent_requests: list[dict[str, Any]],
) -> None:  # fmt: skip
    """The door leaves out only what the asking viewer may not see: the owner of an item made
    private still gets answers from it (the test above could not pass by leaving out all)."""
    alice = user
    item = add_memory(thinking_engine, ALARM, by=alice)
    make_private_unconfirmed(thinking_engine, alice, item, "failed_before")
    chat = make_conversation(viewer=alice)

    run_turn(conversation=chat, text="ask what is the alarm code")
    door_calls_for(PendingAsk.objects.get(conversation=chat).ask_id)
    answered_by_engine(thinking_engine, chat)
    run_turn(conversation=Conversation.objects.get(pk=chat.pk), text="any news?")

    assert CODE in PendingAsk.objects.get(conversation=chat).answer
