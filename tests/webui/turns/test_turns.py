"""The one turn service: save, assemble, call, run tools in bounded rounds, save the reply."""

from typing import Any

import pytest
from django.test import override_settings

from tests.support.failed_turns import failed_turn
from tests.support.fakes import ToolHungryAdapter
from tests.support.recording_tool import RecordingTool
from webui.models import Conversation, Message, Vessel
from webui.turns.service import TurnError, retry_turn, run_turn
from webui.vessels import registry

pytestmark = pytest.mark.django_db


def test_a_turn_saves_the_user_message_and_the_reply(conversation: Conversation) -> None:
    result = run_turn(conversation=conversation, text="hello there")

    rows = list(conversation.messages.order_by("sequence"))
    assert [(m.role, m.content) for m in rows] == [
        ("user", "hello there"),
        ("assistant", "(offline) I heard: “hello there”"),
    ]
    assert result.assistant_message == rows[1]
    assert rows[1].vessel == conversation.vessel
    assert rows[1].tool_uses == []
    assert set(rows[1].usage) == {
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
    }
    assert rows[1].usage["input_tokens"] > 0


def test_the_first_message_titles_an_untitled_conversation(conversation: Conversation) -> None:
    run_turn(conversation=conversation, text="What shall we cook tonight, something with leeks?")

    conversation.refresh_from_db()
    assert conversation.title == "What shall we cook tonight, something with leeks?"


def test_a_tool_call_is_run_and_saved_with_its_output(
    conversation: Conversation, recording_tool: Any
) -> None:
    result = run_turn(conversation=conversation, text="remember I like tea")

    reply = result.assistant_message
    assert len(recording_tool.calls) == 1
    use = reply.tool_uses[0]
    assert use["name"] == "memory"
    assert use["input"] == {"verb": "remember", "text": "I like tea"}
    assert use["output"]["echo"] == "I like tea"
    assert use["output"]["verb"] == "remember"
    assert reply.rounds == [{"text": "", "tool_use_ids": [use["id"]]}]
    assert "I like tea" in reply.content


def test_tools_are_fixed_at_the_first_turn(conversation: Conversation, extension: Any) -> None:
    run_turn(conversation=conversation, text="hello")
    conversation.refresh_from_db()
    assert conversation.offered_tools == []

    extension(RecordingTool())
    result = run_turn(conversation=conversation, text="remember tea")

    conversation.refresh_from_db()
    assert conversation.offered_tools == []
    assert result.assistant_message.tool_uses == []


def test_an_unknown_tool_gets_an_error_result_and_the_turn_goes_on(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The conversation offers a tool no installed extension owns any more.
    conversation.offered_tools = [
        {"name": "memory", "description": "gone", "input_schema": {"type": "object"}}
    ]
    conversation.save()

    result = run_turn(conversation=conversation, text="recall tea")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output["error"] == "unknown_tool"


@override_settings(WEBUI={"MAX_TOOL_ROUNDS": 3, "MAX_MESSAGE_CHARS": 100})
def test_tool_rounds_are_bounded_and_the_reply_says_it_stopped(
    conversation: Conversation, recording_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ToolHungryAdapter)
    ToolHungryAdapter.calls = 0

    result = run_turn(conversation=conversation, text="recall everything")

    assert ToolHungryAdapter.calls == 4
    assert len(recording_tool.calls) == 3
    assert len(result.assistant_message.rounds) == 3
    assert "stopped after 3 rounds" in result.assistant_message.content
    assert result.assistant_message.usage["input_tokens"] == 40


def test_a_vessel_failure_keeps_the_user_message_and_says_why(conversation: Conversation) -> None:
    error = failed_turn(conversation, "are you there?")

    assert error.code == "overloaded"
    assert error.status == 502
    # In a family's words; what the provider said is in the log and on the vessel, for the admin.
    assert (
        error.message == "Offline is busy right now. Your message is kept: press Retry in a minute."
    )
    assert error.details["retryable"] is True
    assert "provider_code" not in error.details
    conversation.vessel.refresh_from_db()
    assert conversation.vessel.last_outcome == "failed"
    assert "overloaded" in conversation.vessel.last_problem
    assert [(m.role, m.content) for m in conversation.messages.all()] == [
        ("user", "are you there?")
    ]
    assert error.user_message == conversation.messages.get()


def test_a_failed_turn_can_be_retried_without_saving_the_message_twice(
    conversation: Conversation,
) -> None:
    failed_turn(conversation, "are you there?")

    result = retry_turn(conversation=conversation)

    assert [m.role for m in conversation.messages.order_by("sequence")] == ["user", "assistant"]
    assert result.user_message.content == "are you there?"


def test_retry_with_nothing_waiting_is_a_clear_conflict(conversation: Conversation) -> None:
    run_turn(conversation=conversation, text="hi")

    with pytest.raises(TurnError) as caught:
        retry_turn(conversation=conversation)

    assert caught.value.code == "nothing_to_retry"
    assert caught.value.status == 409


def test_a_missing_vault_fails_the_turn_clearly_and_keeps_the_message(
    conversation: Conversation, tmp_path: Any
) -> None:
    conversation.soul.vault_path = str(tmp_path / "gone")
    conversation.soul.save()

    with pytest.raises(TurnError) as caught:
        run_turn(conversation=conversation, text="hello")

    assert caught.value.code == "vault_unavailable"
    assert caught.value.status == 503
    assert "Pippa's vault cannot be read" in caught.value.message
    assert conversation.messages.get().content == "hello"


def test_a_switched_off_vessel_is_a_configuration_error(conversation: Conversation) -> None:
    Vessel.objects.filter(pk=conversation.vessel_id).update(enabled=False)
    conversation.refresh_from_db()

    with pytest.raises(TurnError) as caught:
        run_turn(conversation=conversation, text="hello")

    assert caught.value.code == "switched_off"
    assert caught.value.message == (
        "Offline is switched off. Your message is kept: move this chat to another model, "
        "then press Retry."
    )


def test_messages_keep_their_order_by_sequence(conversation: Conversation) -> None:
    for index in range(5):
        run_turn(conversation=conversation, text=f"message {index}")

    sequences = list(conversation.messages.order_by("sequence").values_list("sequence", flat=True))
    assert sequences == list(range(1, 11))
    assert Message.objects.filter(conversation=conversation, role="user").count() == 5


def test_each_turn_settles_the_pins_before_the_prompt_reads_them(
    conversation: Conversation, extension: Any
) -> None:
    from webui.extensions import TurnContext, TurnExtension

    seen: list[tuple[str, bool, bool]] = []

    class Watcher(TurnExtension):
        def settle(self, *, turn: TurnContext) -> None:
            c = turn.conversation
            seen.append(("settle", bool(c.vault_sha256), c.offered_tools is not None))

        def memory_block(self, *, turn: TurnContext) -> str | None:
            c = turn.conversation
            seen.append(("memory_block", bool(c.vault_sha256), c.offered_tools is not None))
            return None

    extension(Watcher())

    run_turn(conversation=conversation, text="hello")
    run_turn(conversation=conversation, text="again")

    # The vault is pinned before the extension settles, the tools after it; the block reads last.
    assert seen == [
        ("settle", True, False),
        ("memory_block", True, True),
        ("settle", True, True),
        ("memory_block", True, True),
    ]


def test_an_extensions_turn_state_lasts_one_turn_and_is_its_own(
    conversation: Conversation, extension: Any
) -> None:
    from dataclasses import dataclass, field

    from webui.extensions import TurnContext, TurnExtension

    @dataclass
    class Notes:
        points: list[str] = field(default_factory=list)

    @dataclass
    class OtherNotes:
        points: list[str] = field(default_factory=list)

    kept: list[list[str]] = []

    class Carrier(TurnExtension):
        def settle(self, *, turn: TurnContext) -> None:
            turn.state(Notes).points.append("settle")
            turn.state(OtherNotes).points.append("other")

        def turn_slot_parts(self, *, turn: TurnContext) -> list[str]:
            turn.state(Notes).points.append("slot")
            return []

        def turn_saved(self, *, turn: TurnContext, assistant_message: Message) -> None:
            kept.append(list(turn.state(Notes).points))

    extension(Carrier())

    run_turn(conversation=conversation, text="hello")
    run_turn(conversation=conversation, text="again")

    assert kept == [["settle", "slot"], ["settle", "slot"]]


def test_every_reply_names_the_message_it_answers(conversation: Conversation) -> None:
    first = run_turn(conversation=conversation, text="one")
    second = run_turn(conversation=conversation, text="two")

    assert first.assistant_message.reply_to == first.user_message
    assert second.assistant_message.reply_to == second.user_message
    assert second.user_message.reply_to is None


def test_retry_can_answer_an_older_unanswered_message(conversation: Conversation) -> None:
    first = failed_turn(conversation, "first")
    run_turn(conversation=conversation, text="second")

    result = retry_turn(conversation=conversation, user_message=first.user_message)

    assert result.assistant_message.reply_to == first.user_message
    assert result.assistant_message.content == "(offline) I heard: “first”"
    with pytest.raises(TurnError) as again:
        retry_turn(conversation=conversation, user_message=first.user_message)
    assert (again.value.code, again.value.status) == ("already_answered", 409)
    assert conversation.messages.filter(role="assistant").count() == 2
