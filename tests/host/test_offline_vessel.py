"""The offline vessel: deterministic, no network, drives the tool loop by verb."""

from typing import Any

import pytest

from webui.prompt import Prompt, ToolDefinition, ToolRound, ToolUse
from webui.vessels.offline import OfflineAdapter

MEMORY = ToolDefinition(name="memory", description="d", input_schema={"type": "object"})


@pytest.fixture
def adapter() -> OfflineAdapter:
    class Vessel:
        model = "offline-1"

    return OfflineAdapter(Vessel())  # type: ignore[arg-type]


def prompt(text: str, **fields: Any) -> Prompt:
    return Prompt(
        conversation_id="c1",
        system_sections=("vault",),
        history=(),
        user_text=text,
        turn_slot=("Current time: now.",),
        user_message_id="m1",
        **fields,
    )


@pytest.mark.parametrize("verb", ["remember", "recall", "ask"])
def test_a_verb_message_calls_the_memory_tool_with_the_rest(
    adapter: OfflineAdapter, verb: str
) -> None:
    reply = adapter.complete(prompt=prompt(f"{verb.title()}  the blue door "), tools=[MEMORY])

    assert reply.text == ""
    assert len(reply.tool_calls) == 1
    assert reply.tool_calls[0].name == "memory"
    assert reply.tool_calls[0].input == {"verb": verb, "text": "the blue door"}


def test_tool_call_ids_are_deterministic(adapter: OfflineAdapter) -> None:
    first = adapter.complete(prompt=prompt("recall tea"), tools=[MEMORY])
    second = adapter.complete(prompt=prompt("recall tea"), tools=[MEMORY])

    assert first == second


def test_it_answers_from_the_tool_result(adapter: OfflineAdapter) -> None:
    use = ToolUse(
        id="t1",
        name="memory",
        input={"verb": "recall", "text": "tea"},
        output={"items": ["tea ☕"]},
    )
    reply = adapter.complete(
        prompt=prompt("recall tea", current_rounds=(ToolRound(text="", tool_uses=(use,)),)),
        tools=[MEMORY],
    )

    assert reply.tool_calls == ()
    assert reply.text == '(offline) memory recall: {"items":["tea ☕"]}'


def test_without_a_memory_tool_it_says_so_instead_of_calling_one(adapter: OfflineAdapter) -> None:
    reply = adapter.complete(prompt=prompt("remember tea"), tools=[])

    assert reply.tool_calls == ()
    assert "no memory tool" in reply.text


def test_anything_else_gets_a_short_deterministic_reply(adapter: OfflineAdapter) -> None:
    reply = adapter.complete(prompt=prompt("Good   morning,\nPippa"), tools=[MEMORY])

    assert reply.text == "(offline) I heard: “Good morning, Pippa”"
    assert reply.usage["input_tokens"] > 0
    assert reply.usage["cached_input_tokens"] == 0


def test_the_slot_is_a_separate_trailing_part_of_the_newest_message(
    adapter: OfflineAdapter,
) -> None:
    request = adapter.build_request(prompt=prompt("hi"), tools=[MEMORY])

    assert request["messages"][-1]["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "text", "text": "Current time: now."},
    ]


SCOPED = ToolDefinition(
    name="memory",
    description="d",
    input_schema={"type": "object", "properties": {"scope": {"enum": ["private", "household"]}}},
)


def test_remember_for_everyone_remembers_the_rest_for_the_household(
    adapter: OfflineAdapter,
) -> None:
    reply = adapter.complete(
        prompt=prompt("remember for everyone, the bins go out"), tools=[SCOPED]
    )

    assert reply.tool_calls[0].input == {
        "verb": "remember",
        "text": "the bins go out",
        "scope": "household",
    }


def test_remember_for_everyone_is_plain_text_when_the_tool_takes_no_scope(
    adapter: OfflineAdapter,
) -> None:
    reply = adapter.complete(prompt=prompt("remember for everyone the bins"), tools=[MEMORY])
    plain = adapter.complete(prompt=prompt("remember everyone likes tea"), tools=[SCOPED])

    assert reply.tool_calls[0].input == {"verb": "remember", "text": "for everyone the bins"}
    assert plain.tool_calls[0].input == {"verb": "remember", "text": "everyone likes tea"}
