"""Every request an OpenAI-family adapter sends is one OpenAI's published schema accepts.

The schemas are OpenAI's own (``openai_schemas/``, from openai/openai-openapi; its README says how
they were extracted). On top of them the check refuses top-level keys the schema does not name, as
the live API does. Each adapter runs a short conversation through ``run_turn`` against its mocked
provider: a plain turn, a tool round, parallel calls with text beside them, and a turn that replays
all of those; then a structured call over a replayed history. Every request body is validated.

``openai`` and ``openai_compatible`` build the same Chat Completions body and are checked against
the chat schema. Ollama is not: ``/api/chat`` is Ollama's own shape (``options``, ``format``, tool
arguments as objects, results named by ``tool_name``), which the chat schema rightly refuses.
A streamed call over a replayed history and a tool round is checked too: its request is the same
body plus the stream switch (``stream``, and for Chat ``stream_options.include_usage``).
"""

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from provider_doubles import Kit, OpenAICompatibleKit, OpenAIKit, OpenAIResponsesKit
from tests.support.recording_tool import RECORDING_TOOL
from webui.models import Conversation, Soul, Vessel
from webui.prompt_types import HistoryMessage, Prompt, ToolRound, ToolUse
from webui.turns.service import run_turn
from webui.vessels.registry import adapter_for
from webui.vessels.reply_types import ReplyDone

pytestmark = pytest.mark.django_db

SCHEMAS = Path(__file__).parent / "openai_schemas"
SCHEMA_FOR: dict[str, str] = {
    "openai": "chat-request.json",
    "openai_compatible": "chat-request.json",
    "openai_responses": "responses-request.json",
}
FAMILY: list[Callable[[], Kit]] = [OpenAIKit, OpenAICompatibleKit, OpenAIResponsesKit]
CONVERSATION = ["hello", "remember Zoë likes tea", "recall tea && coffee", "what did I just say?"]


@functools.cache
def validator(schema_file: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def top_level_keys(schema: dict[str, Any]) -> set[str]:
    """The keys the schema names at the top of the body, through its ``allOf`` layers."""
    keys = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        keys |= top_level_keys(part)
    return keys


def request_faults(body: dict[str, Any], *, schema_file: str) -> list[str]:
    """What the schema (and the API's refusal of unknown top-level keys) says is wrong with ``body``."""
    checker = validator(schema_file)
    # best_match walks into anyOf branches, so a fault names the deepest part that is wrong.
    deepest = (best_match([error]) for error in checker.iter_errors(body))
    faults = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(body)'}: {error.message[:200]}"
        for error in deepest
    ]
    unknown = sorted(set(body) - top_level_keys(checker.schema))
    faults += [f"{key}: not a top-level key of the request" for key in unknown]
    return faults


def all_faults(requests: list[dict[str, Any]], *, schema_file: str) -> dict[int, list[str]]:
    found = {i: request_faults(r, schema_file=schema_file) for i, r in enumerate(requests)}
    return {i: faults for i, faults in found.items() if faults}


# The vessel (tests/webui/conftest.py) is made for this kit.
@pytest.fixture(params=FAMILY, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


def bodies(rsps_calls: Any) -> list[dict[str, Any]]:
    return [json.loads(call.request.body) for call in rsps_calls]


@pytest.fixture
def provider(kit: Kit) -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        kit.serve(rsps)
        yield rsps


def replayed_history() -> tuple[HistoryMessage, ...]:
    """Two earlier turns: a plain one, and one with a tool round that had text beside its calls."""
    use = ToolUse(
        id="call_0001",
        name="memory",
        input={"verb": "recall", "text": "tea"},
        output={"echo": "tea"},
    )
    return (
        HistoryMessage(id="u1", role="user", text="hello"),
        HistoryMessage(id="a1", role="assistant", text="Echo: hello"),
        HistoryMessage(id="u2", role="user", text="recall tea"),
        HistoryMessage(
            id="a2",
            role="assistant",
            text='Done: ["tea"]',
            rounds=(ToolRound(text="Let me look.", tool_uses=(use,)),),
        ),
    )


def replayed_prompt(user_text: str) -> Prompt:
    """``user_text`` as the newest message after :func:`replayed_history`, with a per-turn slot."""
    return Prompt(
        conversation_id="brain-1",
        system_sections=("Decide.",),
        history=replayed_history(),
        user_text=user_text,
        turn_slot=("Current time: now.",),
        user_message_id="u3",
    )


class TestOpenAIRequestsMatchThePublishedSchemas:
    def test_every_request_of_a_conversation_with_tool_rounds_and_replays_is_valid(
        self,
        kit: Kit,
        soul: Soul,
        vessel: Vessel,
        user: Any,
        recording_tool: Any,
        provider: responses.RequestsMock,
    ) -> None:
        chat = Conversation.objects.create(soul=soul, vessel=vessel, viewer=user)
        for text in CONVERSATION:
            run_turn(conversation=chat, text=text)

        requests = bodies(provider.calls)
        # A plain turn, two tool turns (two requests each), and a turn replaying all of them.
        assert len(requests) == 6
        assert len(recording_tool.calls) == 3
        # The last turn still carries what the assistant said before, beside its calls and after.
        replayed = json.dumps(requests[-1], ensure_ascii=False)
        assert "Echo: hello" in replayed
        assert "Let me look." in replayed
        assert all_faults(requests, schema_file=SCHEMA_FOR[kit.adapter]) == {}

    def test_a_structured_request_over_a_replayed_history_is_valid(
        self, kit: Kit, vessel: Vessel, provider: responses.RequestsMock
    ) -> None:
        provider.replace(responses.POST, kit.url, json=kit.text_body('{"choice": "tea"}'))
        prompt = replayed_prompt("Tea or coffee?")
        schema = {
            "type": "object",
            "properties": {"choice": {"type": "string", "enum": ["tea", "coffee"]}},
            "required": ["choice"],
            "additionalProperties": False,
        }

        reply = adapter_for(vessel).complete_structured(
            prompt=prompt, schema=schema, schema_name="decide"
        )

        assert reply.data == {"choice": "tea"}
        requests = bodies(provider.calls)
        assert len(requests) == 1
        assert all_faults(requests, schema_file=SCHEMA_FOR[kit.adapter]) == {}

    def test_a_streamed_request_over_a_replayed_history_and_a_tool_round_is_valid(
        self, kit: Kit, vessel: Vessel, provider: responses.RequestsMock
    ) -> None:
        use = ToolUse(
            id="call_0002",
            name="memory",
            input={"verb": "recall", "text": "cake"},
            output={"echo": "cake"},
        )
        prompt = replayed_prompt("recall cake").with_round(
            ToolRound(text="Let me look.", tool_uses=(use,))
        )

        events = list(adapter_for(vessel).stream(prompt=prompt, tools=[RECORDING_TOOL]))

        assert isinstance(events[-1], ReplyDone)
        assert events[-1].reply.text == 'Done: ["cake"]'
        requests = bodies(provider.calls)
        assert len(requests) == 1
        assert requests[0]["stream"] is True
        assert all_faults(requests, schema_file=SCHEMA_FOR[kit.adapter]) == {}


class TestTheSchemaCheckRefusesWhatTheAPIRefuses:
    """The check itself can fail: these are bodies the live API answers with a 400."""

    def test_an_unknown_top_level_key_is_refused(self) -> None:
        body = {"model": "gpt-5", "input": "hi", "store": False, "cache_key": "c1"}

        assert request_faults(body, schema_file="responses-request.json") == [
            "cache_key: not a top-level key of the request"
        ]

    def test_output_text_in_a_plain_assistant_message_is_refused(self) -> None:
        replay = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Echo: hello"}],
        }
        body = {"model": "gpt-5", "input": [replay], "store": False}

        faults = request_faults(body, schema_file="responses-request.json")

        assert faults
        assert all(fault.startswith("input") for fault in faults)

    def test_an_unknown_chat_message_role_is_refused(self) -> None:
        body = {"model": "gpt-5", "messages": [{"role": "model", "content": "hi"}]}

        faults = request_faults(body, schema_file="chat-request.json")

        assert faults
        assert all(fault.startswith("messages") for fault in faults)
