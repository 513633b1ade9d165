"""The one memory tool as the plug-in offers it today: offered by the household's rules, fixed at
the first turn, strict about its input, and honest when the engine cannot help."""

from typing import Any

import pytest
from django.test import override_settings

from pippa_memory.turn.tool import MEMORY_TOOL
from webui.models import Conversation, Vessel
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def offered(conversation: Conversation) -> list[str]:
    conversation.refresh_from_db()
    return [tool["name"] for tool in conversation.offered_tools]


def test_the_tool_is_offered_when_memory_and_the_vessel_toggle_are_on(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")

    conversation.refresh_from_db()
    assert conversation.offered_tools == [MEMORY_TOOL.as_dict()]


def test_not_offered_when_the_vessel_toggle_is_off(conversation: Conversation) -> None:
    Vessel.objects.update(memory_tool_enabled=False)
    conversation.refresh_from_db()

    result = run_turn(conversation=conversation, text="remember tea")

    assert offered(conversation) == []
    assert result.assistant_message.tool_uses == []


def test_not_offered_in_a_temporary_chat(make_conversation: Any) -> None:
    conversation = make_conversation(temporary=True)

    run_turn(conversation=conversation, text="hello")

    assert offered(conversation) == []


@override_settings(PIPPA_MEMORY={"ENABLED": False})
def test_not_offered_when_memory_is_switched_off(conversation: Conversation) -> None:
    run_turn(conversation=conversation, text="hello")

    assert offered(conversation) == []


def test_toggling_the_vessel_does_not_move_a_running_conversation(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")
    Vessel.objects.update(memory_tool_enabled=False)
    conversation.refresh_from_db()

    result = run_turn(conversation=conversation, text="remember tea")

    assert offered(conversation) == ["memory"]
    assert result.assistant_message.tool_uses[0]["name"] == "memory"


def test_remember_is_recorded_and_says_it_is_kept_once_saved(conversation: Conversation) -> None:
    result = run_turn(conversation=conversation, text="remember Alice likes tea")

    use = result.assistant_message.tool_uses[0]
    assert use["input"] == {"verb": "remember", "text": "Alice likes tea"}
    assert use["output"]["status"] == "noted"
    assert use["output"]["scope"] == "private"
    assert "once the turn is saved; only Alice will see it" in use["output"]["message"]


def remembered_scope(conversation: Conversation, tool_input: dict[str, Any]) -> Any:
    from pippa_memory.extension import MemoryExtension
    from webui.extensions import TurnContext
    from webui.prompt_types import ToolCall

    turn = TurnContext(conversation=conversation, user_message=None, first_turn=False)  # type: ignore[arg-type]
    _, output = MemoryExtension().execute_tool(
        turn=turn, call=ToolCall(id="c1", name="memory", input=tool_input)
    )
    return output["scope"]


@pytest.mark.parametrize(
    ("preference", "asked", "kept"),
    [
        (None, None, "private"),
        ("household", None, "household"),
        ("household", "private", "private"),
        (None, "household", "household"),
    ],
)
def test_remember_keeps_the_scope_asked_for_else_the_members_own_default(
    conversation: Conversation, user: Any, preference: Any, asked: Any, kept: str
) -> None:
    from pippa_memory.models import MemberPreference

    if preference:
        MemberPreference.objects.create(user=user, default_scope=preference)

    tool_input = {"verb": "remember", "text": "x", "scope": asked}

    assert remembered_scope(conversation, tool_input) == kept


@pytest.mark.parametrize("asked", [None, "private", "household"])
def test_an_unattended_runs_remember_is_always_the_households(
    make_conversation: Any, asked: Any
) -> None:
    job = make_conversation(viewer=None, kind="job")

    assert remembered_scope(job, {"verb": "remember", "text": "x", "scope": asked}) == "household"


def test_the_tool_says_when_household_fits_and_offers_scope_beside_verb_and_text() -> None:
    schema = MEMORY_TOOL.input_schema

    assert schema["required"] == ["verb", "text"]
    assert schema["properties"]["scope"]["enum"] == ["private", "household"]
    assert "facts about the home that everyone shares" in MEMORY_TOOL.description


@pytest.mark.parametrize("verb", ["recall", "ask"])
def test_with_no_engine_configured_recall_and_ask_say_so_and_the_turn_goes_on(
    conversation: Conversation, verb: str
) -> None:
    result = run_turn(conversation=conversation, text=f"{verb} tea")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output["error"] == "memory_unavailable"
    assert output["reason"] == "engine_unconfigured"
    assert "carry on without it" in output["message"]
    assert result.assistant_message.content


def test_once_offered_the_tool_stays_and_answers_unavailable_when_memory_goes_off(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")

    with override_settings(PIPPA_MEMORY={"ENABLED": False}):
        result = run_turn(conversation=conversation, text="remember tea")

    assert offered(conversation) == ["memory"]
    output = result.assistant_message.tool_uses[0]["output"]
    assert output == {
        "error": "memory_unavailable",
        "reason": "memory_disabled",
        "message": "Memory is switched off for this household; carry on without it.",
    }


@pytest.mark.parametrize(
    ("tool_input", "words"),
    [
        ({"verb": "forget", "text": "x"}, "Unknown verb 'forget'"),
        ({"verb": "recall"}, "The text must be a non-empty string"),
        ({"verb": "recall", "text": "  "}, "The text must be a non-empty string"),
        ({"verb": "recall", "text": "x", "limit": 3}, "Unexpected fields ['limit']"),
        ({"verb": "remember", "text": "x", "scope": "everyone"}, "Unknown scope 'everyone'"),
        ({"verb": "recall", "text": "x", "scope": "household"}, "Only remember takes a scope"),
        ("recall x", "The input must be an object"),
    ],
)
def test_bad_tool_input_gets_an_error_result_saying_what_is_allowed(
    conversation: Conversation, tool_input: Any, words: str
) -> None:
    from pippa_memory.extension import MemoryExtension
    from webui.extensions import TurnContext
    from webui.prompt_types import ToolCall

    turn = TurnContext(conversation=conversation, user_message=None, first_turn=False)  # type: ignore[arg-type]
    handled, output = MemoryExtension().execute_tool(
        turn=turn, call=ToolCall(id="c1", name="memory", input=tool_input)
    )

    assert handled is True
    assert output["error"] == "invalid_input"
    assert words in output["message"]
    assert '"verb": "recall" | "remember" | "ask"' in output["message"]


@pytest.mark.parametrize("verb", ["recall", "remember", "ask"])
def test_a_temporary_chat_that_calls_the_tool_anyway_reaches_no_memory(
    memory_on: Any, make_conversation: Any, verb: str
) -> None:
    # Never offered in a temporary chat; a model may still call a tool it has seen elsewhere.
    conversation = make_conversation(temporary=True, offered_tools=[MEMORY_TOOL.as_dict()])

    result = run_turn(conversation=conversation, text=f"{verb} tea")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output == {
        "error": "memory_unavailable",
        "reason": "temporary",
        "message": "Nothing is remembered in a temporary chat; carry on without memory.",
    }
    assert memory_on.received == []
