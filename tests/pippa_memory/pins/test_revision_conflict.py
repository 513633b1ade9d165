"""A revision names one state for ever: an engine that answers a revision stored here with other
text has broken the contract. Over real sockets: the reference engine pins a first conversation,
then (through its control door, as an engine that lost its state and counts revisions again
would) serves that same revision with other text. The new conversation pins absent for the turn,
with the reason recorded, and never carries either text; the log says so once, not every turn;
and once the engine names a new revision the conversation pins it."""

import logging
from typing import Any

import pytest

from pippa_memory.models import PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import head
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

HEAD = "/v1/souls/pippa/head"


def pin_reasons(conversation: Conversation) -> list[tuple[str, str, str]]:
    return list(
        PinRecord.objects.filter(conversation=conversation)
        .order_by("created_at", "id")
        .values_list("outcome", "revision", "reason")
    )


def test_a_reused_revision_pins_absent_never_the_stored_copy_and_is_logged_once(
    memory_on: ReferenceEngine,
    make_conversation: Any,
    user: Any,
    sent_requests: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    revision = memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    first = make_conversation()
    run_turn(conversation=first, text="hello")
    first.refresh_from_db()
    assert first.pinned_head == revision
    # The engine forgets everything, starts counting again, and names the same revision anew.
    reused = {**head(memory_on, viewer=user), "block": "- Ada is allergic to peanuts."}
    assert reused["revision"] == revision
    memory_on.set_fault("wrong_shape", paths=[HEAD], body=reused)
    later = make_conversation()

    with caplog.at_level(logging.INFO):
        for text in ("hello", "and again", "once more"):
            run_turn(conversation=later, text=text)

    later.refresh_from_db()
    assert later.pinned_head is None
    assert pin_reasons(later) == [("absent", "", "revision_conflict")]
    for request in sent_requests[1:]:
        assert "Bins go out" not in request["system"]
        assert "peanuts" not in request["system"]
    said = [r for r in caplog.records if "different text" in r.getMessage()]
    assert len(said) == 1
    assert said[0].levelno == logging.ERROR
    assert revision in said[0].getMessage()
    # The first conversation keeps the block it was pinned to, for life.
    assert "Bins go out on Tuesday." in sent_requests[0]["system"]

    memory_on.reset()
    moved_on = memory_on.state.remember("pippa", "The boiler code is 4471.")
    run_turn(conversation=later, text="and now?")

    later.refresh_from_db()
    assert later.pinned_head == moved_on != revision
    assert pin_reasons(later)[-1] == ("pinned", moved_on, "engine_recovered")
    assert "The boiler code is 4471." in sent_requests[-1]["system"]
