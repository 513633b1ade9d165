"""Tool rounds are kept as each finishes: a failure in a later round keeps what the earlier one
did, and the retry continues from it, running no tool twice, and saves the reply a turn without
the failure would have saved, down to the bytes of the next request."""

from typing import Any

import pytest

from tests.support.fakes import SecondRoundFailsOnce
from webui.models import Conversation, Message, TurnRound
from webui.text.canonical import canonical_json
from webui.turns.service import TurnError, retry_turn, run_turn
from webui.vessels import registry
from webui.vessels.errors import VesselError

pytestmark = pytest.mark.django_db


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    monkeypatch.setattr(
        "webui.prompt.assembly.timezone.now", lambda: datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
    )


@pytest.fixture
def second_round_fails(monkeypatch: pytest.MonkeyPatch) -> type[SecondRoundFailsOnce]:
    monkeypatch.setattr(SecondRoundFailsOnce, "failures_left", 1)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", SecondRoundFailsOnce)
    return SecondRoundFailsOnce


def without_ids(value: Any, conversation: Conversation) -> str:
    """``value`` as canonical JSON with the conversation's tool-call ids (derived from its own
    message ids) named by their order instead, so two conversations compare byte for byte."""
    text = canonical_json(value)
    uses = [u["id"] for m in conversation.messages.order_by("sequence") for u in m.tool_uses]
    for index, use_id in enumerate(uses):
        text = text.replace(use_id, f"<call {index}>")
    return text


def reply_fields(message: Message) -> dict[str, Any]:
    fields = ("content", "tool_uses", "rounds", "usage", "stopped")
    return {name: getattr(message, name) for name in fields}


def test_a_failing_second_round_keeps_the_first_and_the_retry_runs_no_tool_twice(
    conversation: Conversation, recording_tool: Any, second_round_fails: Any, saved_replies: list
) -> None:
    with pytest.raises(TurnError) as caught:
        run_turn(conversation=conversation, text="remember I like tea")

    assert caught.value.code == "overloaded"
    (kept,) = TurnRound.objects.filter(user_message=caught.value.user_message)
    assert kept.index == 0
    assert [use["input"] for use in kept.tool_uses] == [{"verb": "remember", "text": "I like tea"}]
    assert not saved_replies

    result = retry_turn(conversation=conversation)

    assert len(recording_tool.calls) == 1
    assert result.assistant_message.reply_to == caught.value.user_message
    assert result.assistant_message.tool_uses == kept.tool_uses
    assert not TurnRound.objects.exists()
    assert saved_replies == [result.assistant_message]


def test_a_retried_turn_saves_what_an_unfailed_turn_saves_and_the_next_request_matches(
    make_conversation: Any,
    recording_tool: Any,
    sent_requests: list[dict[str, Any]],
    fixed_clock: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unfailed, failed = make_conversation(), make_conversation()
    run_turn(conversation=unfailed, text="remember I like tea")
    run_turn(conversation=unfailed, text="and now?")
    plain_requests = list(sent_requests)
    sent_requests.clear()

    monkeypatch.setattr(SecondRoundFailsOnce, "failures_left", 1)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", SecondRoundFailsOnce)
    with pytest.raises(TurnError):
        run_turn(conversation=failed, text="remember I like tea")
    retry_turn(conversation=failed)
    run_turn(conversation=failed, text="and now?")

    def replies(conversation: Conversation) -> str:
        rows = conversation.messages.filter(role="assistant").order_by("sequence")
        return without_ids([reply_fields(row) for row in rows], conversation)

    assert replies(failed) == replies(unfailed)
    # Answered: the first call, the retried call after the kept round (the failed one never got
    # an answer), the next turn's call.
    first, retried_second, following = sent_requests
    assert without_ids(retried_second, failed) == without_ids(plain_requests[1], unfailed)
    assert without_ids(following, failed) == without_ids(plain_requests[2], unfailed)
    assert canonical_json(first) == canonical_json(plain_requests[0])


def test_the_round_limit_counts_the_rounds_a_failed_attempt_kept(
    conversation: Conversation, recording_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.test import override_settings

    from tests.support.fakes import ToolHungryAdapter

    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ToolHungryAdapter)
    ToolHungryAdapter.calls = 0
    original = ToolHungryAdapter.send

    def fail_the_third_call(self: Any, request: dict[str, Any]) -> Any:
        if ToolHungryAdapter.calls == 2 and request["rounds"] == 2:
            ToolHungryAdapter.calls += 1
            raise VesselError("overloaded", code="overloaded")
        return original(self, request)

    monkeypatch.setattr(ToolHungryAdapter, "send", fail_the_third_call)
    with override_settings(WEBUI={"MAX_TOOL_ROUNDS": 3}):
        with pytest.raises(TurnError):
            run_turn(conversation=conversation, text="recall everything")
        result = retry_turn(conversation=conversation)

    assert len(recording_tool.calls) == 3
    assert len(result.assistant_message.rounds) == 3
    assert "stopped after 3 rounds" in result.assistant_message.content
