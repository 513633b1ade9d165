"""Every copy is purged: a forget reaches the copies of an item's text that carry no item ids, an
unattended run's stored brief, a background answer that quoted it, and a turn event not yet
delivered (whose ``remember`` of it would make the engine learn it again). Against the reference
engine over a socket."""

import json
from typing import Any

import pytest

from pippa_memory.forgotten_text import ANSWER_WITHHELD, CUT_OUT
from pippa_memory.models import OutboxEvent, PendingAsk, UnattendedMemory
from pippa_memory.outbox.delivery import deliver_due
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, head
from webui.models import Conversation
from webui.turns.service import run_turn
from webui.unattended.runner import run_wake

pytestmark = pytest.mark.django_db

SECRET = "The spare key is under the blue pot."
KEPT = "The bins go out on Tuesday."


def forget(user: Any, item: str) -> dict[str, Any]:
    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")
    assert response.status_code in (200, 202), response.content
    return response.json()


def test_a_forget_deletes_the_stored_brief_of_every_run_that_held_the_items_text(
    memory_on: ReferenceEngine, user: Any, soul: Any, offline_vessel: Any
) -> None:
    add_memory(memory_on, KEPT, by=user)
    before = run_wake(soul=soul)
    item = add_memory(memory_on, SECRET, by=user)
    holding = run_wake(soul=soul)
    assert SECRET in UnattendedMemory.objects.get(conversation=holding.conversation).text

    forget(user, item)

    assert not UnattendedMemory.objects.filter(conversation=holding.conversation).exists()
    assert KEPT in UnattendedMemory.objects.get(conversation=before.conversation).text
    assert SECRET not in json.dumps(list(UnattendedMemory.objects.values_list("text")))


def test_a_forget_replaces_a_background_answer_that_quoted_the_item(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation
) -> None:
    item = add_memory(memory_on, SECRET, by=user)
    quoting = PendingAsk.objects.create(
        conversation=conversation, ask_id="a1", question="where is the key?",
        answer=f"I remember: {SECRET}",
    )  # fmt: skip
    other = PendingAsk.objects.create(
        conversation=conversation, ask_id="a2", question="when are the bins?", answer=KEPT
    )

    forget(user, item)

    quoting.refresh_from_db()
    other.refresh_from_db()
    assert quoting.answer == ANSWER_WITHHELD
    assert other.answer == KEPT


def test_a_turn_event_not_yet_delivered_loses_the_remember_so_the_engine_never_relearns_it(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation
) -> None:
    item = add_memory(memory_on, SECRET, by=user)
    run_turn(conversation=conversation, text=f"remember {SECRET}")
    run_turn(conversation=conversation, text=f"remember {KEPT}")
    assert OutboxEvent.objects.filter(status="pending").count() == 2

    forget(user, item)
    deliver_due(limit=10)

    payloads = json.dumps(list(OutboxEvent.objects.values_list("payload", flat=True)))
    assert SECRET not in payloads
    assert CUT_OUT in payloads
    assert set(OutboxEvent.objects.values_list("status", flat=True)) == {"delivered"}
    block = head(memory_on, viewer=user)["block"]
    assert SECRET not in block
    assert KEPT in block
