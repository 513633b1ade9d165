"""The offline vessel: deterministic, no network, drives the tool loop by verb."""

from typing import Any

import pytest

from webui.prompt_types import Prompt, ToolDefinition, ToolRound, ToolUse
from webui.vessels.offline import OfflineAdapter

MEMORY = ToolDefinition(name="memory", description="d", input_schema={"type": "object"})


@pytest.fixture
def adapter() -> OfflineAdapter:
    class Vessel:
        model = "offline-1"

    return OfflineAdapter(Vessel())  # type: ignore[arg-type]


def prompt(text: str, **fields: Any) -> Prompt:
    fields.setdefault("turn_slot", ("Current time: now.",))
    return Prompt(
        conversation_id="c1",
        system_sections=("vault",),
        history=(),
        user_text=text,
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


def answer_after(
    adapter: OfflineAdapter, verb: str, text: str, output: Any, *, slot: tuple[str, ...] = ()
) -> str:
    """The offline vessel's reply once the memory tool's ``verb`` about ``text`` gave ``output``."""
    use = ToolUse(id="t1", name="memory", input={"verb": verb, "text": text}, output=output)
    reply = adapter.complete(
        prompt=prompt(
            f"{verb} {text}",
            current_rounds=(ToolRound(text="", tool_uses=(use,)),),
            **({"turn_slot": slot} if slot else {}),
        ),
        tools=[MEMORY],
    )
    assert reply.tool_calls == ()
    return reply.text


def test_a_remember_is_said_with_whom_it_is_kept_for(adapter: OfflineAdapter) -> None:
    mine = answer_after(adapter, "remember", "I like tea", {"status": "noted", "scope": "private"})
    ours = answer_after(
        adapter, "remember", "the bins go out", {"status": "noted", "scope": "household"}
    )

    assert mine == "I'll remember that for you: “I like tea”."
    assert ours == "I'll remember that for everyone in the household: “the bins go out”."


TEA = {"text": "I like tea", "at": "2026-12-02T09:30:00Z", "scope": "private", "said_by": "Alice"}
BINS = {"text": "the bins go out", "at": "x", "scope": "household", "said_by": "Bob"}
BUNDLED = {"text": "the boiler was serviced", "at": "x", "scope": "household", "said_by": None}


def test_a_recall_says_what_it_remembers_and_whose_each_item_is(adapter: OfflineAdapter) -> None:
    said = answer_after(adapter, "recall", "tea", {"match": "exact", "items": [TEA, BINS, BUNDLED]})

    assert said == (
        "Here is what I remember about “tea”:\n"
        "- I like tea (you told me; just for you)\n"
        "- the bins go out (Bob told me; for the household)\n"
        "- the boiler was serviced (for the household)"
    )


def test_a_fallback_recall_says_nothing_matched_and_gives_the_most_recent_instead(
    adapter: OfflineAdapter,
) -> None:
    output = {
        "match": "fallback",
        "items": [BINS],
        "fallback": {"from": "memories matching 'submarine'", "to": "the 1 most recent"},
        "note": "Nothing matched 'submarine': these are not matches but a fallback.",
    }

    said = answer_after(adapter, "recall", "submarine", output)

    assert said == (
        "Nothing matched “submarine”, so here are the most recent memories instead:\n"
        "- the bins go out (Bob told me; for the household)"
    )


@pytest.mark.parametrize(
    ("match", "sentence"),
    [
        ("exact", "I don't remember anything about “tea”."),
        ("fallback", "Nothing matched “tea”, and I don't remember anything yet."),
    ],
)
def test_a_recall_that_found_nothing_says_so(
    adapter: OfflineAdapter, match: str, sentence: str
) -> None:
    assert answer_after(adapter, "recall", "tea", {"match": match, "items": []}) == sentence


def test_a_remember_still_on_its_way_is_said_before_what_memory_holds(
    adapter: OfflineAdapter,
) -> None:
    pending = [{"text": "I like green tea", "scope": "private"}]
    found = answer_after(
        adapter, "recall", "tea", {"match": "exact", "items": [TEA], "pending": pending}
    )
    alone = answer_after(
        adapter, "recall", "green", {"match": "fallback", "items": [], "pending": pending}
    )

    assert found == (
        "I noted “I like green tea” a moment ago; it is on its way to memory.\n"
        "Here is what I remember about “tea”:\n"
        "- I like tea (you told me; just for you)"
    )
    assert alone == (
        "I noted “I like green tea” a moment ago; it is on its way to memory.\n"
        "Nothing else about “green” is in memory yet."
    )


def test_an_ask_says_the_answer_will_come_later(adapter: OfflineAdapter) -> None:
    said = answer_after(adapter, "ask", "where is the key", {"status": "asked", "ask_id": "a1"})

    assert said == "I've asked my memory; the answer will come later."


@pytest.mark.parametrize(
    ("output", "sentence"),
    [
        (
            {"error": "memory_unavailable", "reason": "connection_failed", "message": "m"},
            "My memory can't be reached right now, so I can't recall that.",
        ),
        (
            {"error": "memory_unavailable", "reason": "memory_disabled", "message": "m"},
            "Memory is switched off here, so I can't recall that.",
        ),
        (
            {"error": "memory_unavailable", "reason": "temporary", "message": "m"},
            "Nothing is remembered in a temporary chat, so I can't recall that.",
        ),
        (
            {"error": "invalid_input", "message": "The text must be a non-empty string."},
            "My memory tool could not do that: The text must be a non-empty string.",
        ),
    ],
)
def test_a_memory_that_could_not_help_says_why(
    adapter: OfflineAdapter, output: dict[str, Any], sentence: str
) -> None:
    assert answer_after(adapter, "recall", "tea", output) == sentence


def test_an_engine_down_recall_still_says_what_is_on_its_way(adapter: OfflineAdapter) -> None:
    output = {
        "error": "memory_unavailable",
        "reason": "connection_failed",
        "message": "m",
        "pending": [{"text": "I like tea", "scope": "private"}],
    }

    assert answer_after(adapter, "recall", "tea", output) == (
        "I noted “I like tea” a moment ago; it is on its way to memory.\n"
        "My memory can't be reached right now, so I can't recall that."
    )


def test_a_result_it_cannot_read_is_shown_as_it_came(adapter: OfflineAdapter) -> None:
    said = answer_after(adapter, "recall", "tea", {"items": "tea ☕"})

    assert said == '(offline) memory recall: {"items":"tea ☕"}'


SLOT_WITH_ANSWERS = (
    "Current time: now.",
    "Your memory answered questions you asked earlier (for this turn only):\n"
    "- Q: where is the\nspare key\n  A: Under the blue pot.\n"
    "- Q: when are the bins\n  A: Tuesday.",
)


def test_a_background_answer_in_the_slot_is_said_after_the_reply(
    adapter: OfflineAdapter,
) -> None:
    chat = adapter.complete(prompt=prompt("hello", turn_slot=SLOT_WITH_ANSWERS), tools=[MEMORY])
    after_tool = answer_after(
        adapter, "ask", "more", {"status": "asked", "ask_id": "a2"}, slot=SLOT_WITH_ANSWERS
    )

    answers = (
        "About your earlier question “where is the spare key”: Under the blue pot.\n"
        "About your earlier question “when are the bins”: Tuesday."
    )
    assert chat.text == "(offline) I heard: “hello”\n" + answers
    assert after_tool == "I've asked my memory; the answer will come later.\n" + answers


def test_a_slot_without_answers_adds_nothing(adapter: OfflineAdapter) -> None:
    reply = adapter.complete(prompt=prompt("hello"), tools=[MEMORY])

    assert reply.text == "(offline) I heard: “hello”"


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
