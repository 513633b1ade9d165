"""A background answer rides one turn only, even when its acknowledgement failed and a memory it
quoted was forgotten in between (the forget's answer lost too, the engine's ``reset`` fault); and
an answer made from an item since forgotten is withheld by its item ids, not ridden, when the engine
never applied the forget, and taken back and answered afresh by an engine that did: no later
prompt or stored answer holds the forgotten item (the reply that carried it keeps its own words
until its conversation is deleted, ``docs/memory-page.md``). Whole turns on the offline vessel,
against the reference engine over a socket."""

import json
from typing import Any

import pytest
import requests

from pippa_memory.forgotten_text import ANSWER_WITHHELD
from pippa_memory.models import PendingAsk
from pippa_memory.turn.answers import ANSWER_WITHHELD_AFTER_FORGET
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import HEADERS, add_memory
from tests.support.lost_answers import SECRET, forget_losing_the_answer
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

KEPT = "The bins go out on Tuesday."


def slot_of(request: dict[str, Any]) -> str:
    """The per-turn slot the vessel was handed with the user's words (where answers ride)."""
    return json.dumps(request["messages"][-1])


def acks(engine: ReferenceEngine) -> int:
    return sum(1 for r in engine.received if r["path"].endswith("/answers/ack"))


def test_an_unacknowledged_answer_rides_once_and_brings_back_no_item_forgotten_in_between(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    item = add_memory(memory_on, SECRET, by=user)
    run_turn(conversation=conversation, text="ask where is the spare key")
    memory_on.set_fault(
        "error", status=503, paths=[f"/v1/conversations/{conversation.id}/answers/ack"], times=1
    )
    run_turn(conversation=conversation, text="first")  # rides; its acknowledgement fails
    assert SECRET in slot_of(sent_requests[-1])
    forget_losing_the_answer(memory_on, user, item)

    run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="second")

    # The history replays the first reply's own words; the slot and the block hold nothing.
    assert SECRET not in slot_of(sent_requests[-1])
    assert SECRET not in json.dumps(sent_requests[-1]["system"])
    assert acks(memory_on) == 2  # offered again by the engine: only acknowledged
    assert PendingAsk.objects.get().answer == ANSWER_WITHHELD
    assert PendingAsk.objects.get().answered_at is not None


def write_answer_now(engine: ReferenceEngine, conversation: Conversation) -> dict[str, Any]:
    """The engine writes the conversation's answer now, as one answering in the background
    would; the answer, as contract v3 gives it."""
    written = requests.get(
        f"{engine.url}/v1/conversations/{conversation.id}/answers",
        headers={**HEADERS, "X-Memory-Contract": "3"},
        timeout=5,
    )
    assert written.status_code == 200, written.text
    return written.json()["answers"][0]


def answered_from_the_secret(
    engine: ReferenceEngine, user: Any, conversation: Conversation
) -> tuple[str, dict[str, Any]]:
    """Alice's SECRET remembered, asked about in ``conversation``, and the engine's answer
    written now: the item's id, and the answer (which quotes it)."""
    item = add_memory(engine, SECRET, by=user)
    run_turn(conversation=conversation, text="ask where is the spare key")
    written = write_answer_now(engine, conversation)
    assert SECRET in written["answer"]
    return item, written


def test_an_answer_made_from_an_item_whose_forget_the_engine_never_applied_is_withheld(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    item, written = answered_from_the_secret(memory_on, user, conversation)
    assert written["items"] == [item]  # the answer names what it was made from
    forget_losing_the_answer(memory_on, user, item, "failed_before")  # the engine keeps it

    run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="any news?")

    assert SECRET not in json.dumps(sent_requests[-1])
    assert ANSWER_WITHHELD_AFTER_FORGET in slot_of(sent_requests[-1])
    assert PendingAsk.objects.get().answer == ANSWER_WITHHELD_AFTER_FORGET
    assert acks(memory_on) == 1
    assert SECRET not in json.dumps(list(PendingAsk.objects.values_list("answer")))


def test_an_engine_that_applies_a_forget_takes_back_the_answers_built_on_it(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    item, _first = answered_from_the_secret(memory_on, user, conversation)
    forget_losing_the_answer(memory_on, user, item)  # applied; only its answer was lost

    run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="any news?")

    assert SECRET not in json.dumps(sent_requests[-1])
    kept = PendingAsk.objects.get()
    assert kept.answer not in ("", ANSWER_WITHHELD_AFTER_FORGET)  # answered afresh, not withheld
    assert kept.answer in slot_of(sent_requests[-1])
    assert SECRET not in kept.answer


def test_an_answer_to_a_question_asked_after_the_forget_rides_as_usual(
    memory_on: ReferenceEngine, user: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    add_memory(memory_on, KEPT, by=user)
    item = add_memory(memory_on, SECRET, by=user)
    forget_losing_the_answer(memory_on, user, item)
    run_turn(conversation=conversation, text="ask when do the bins go out")

    run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="any news?")

    assert KEPT in slot_of(sent_requests[-1])
    assert ANSWER_WITHHELD_AFTER_FORGET not in slot_of(sent_requests[-1])
