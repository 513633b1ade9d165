"""A vessel failing after a tool round, then Retry: the engine, over real sockets, hears each
``ask`` once and keeps each ``remember`` once, because the round was kept and is replayed, not run
again, and the message gets one answer (one turn event)."""

from typing import Any

import pytest

from pippa_memory.models import OutboxEvent, PendingAsk
from pippa_memory.outbox.delivery import deliver_due
from reference_engine.server import ReferenceEngine
from tests.support.fakes import SecondRoundFailsOnce
from webui.models import Conversation, TurnRound
from webui.turns.service import TurnError, retry_turn, run_turn
from webui.vessels import registry

pytestmark = pytest.mark.django_db


@pytest.fixture
def second_round_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SecondRoundFailsOnce, "failures_left", 1)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", SecondRoundFailsOnce)


def test_a_failing_second_round_and_a_retry_ask_the_engine_once(
    memory_on: ReferenceEngine, conversation: Conversation, second_round_fails: None
) -> None:
    with pytest.raises(TurnError) as caught:
        run_turn(conversation=conversation, text="ask what spice is in the recipe")
    assert TurnRound.objects.filter(user_message=caught.value.user_message).count() == 1

    result = retry_turn(conversation=conversation)

    asks = [r for r in memory_on.received if r["path"] == "/v1/asks"]
    assert [r["body"]["question"] for r in asks] == ["what spice is in the recipe"]
    (use,) = result.assistant_message.tool_uses
    assert use["output"]["status"] == "asked"
    assert PendingAsk.objects.get().ask_id == use["output"]["ask_id"]
    assert OutboxEvent.objects.count() == 1


def test_a_failing_second_round_and_a_retry_remember_once(
    memory_on: ReferenceEngine, conversation: Conversation, second_round_fails: None
) -> None:
    with pytest.raises(TurnError):
        run_turn(conversation=conversation, text="remember Ada likes jam")
    assert not OutboxEvent.objects.exists()  # nothing reaches the engine from a failed turn

    retry_turn(conversation=conversation)
    events = OutboxEvent.objects.count()
    assert [o.kind for o in deliver_due(limit=events + 1)] == ["delivered"] * events

    posted: list[Any] = [r for r in memory_on.received if r["path"] == "/v1/events"]
    assert len(posted) == 1
    assert [m.text for m in memory_on.state.souls["pippa"].memories] == ["Ada likes jam"]
