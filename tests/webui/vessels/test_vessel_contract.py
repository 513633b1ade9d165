"""One contract, seven adapters: every vessel runs the same turns, renders the tool in its own
format, replays tool rounds in its own shapes, keeps its requests byte-stable, and answers in
structured mode with tools off. Providers are mocked with ``responses`` using their documented
payloads (see ``provider_doubles/``); the offline vessel answers itself."""

from datetime import UTC, datetime
from typing import Any

import pytest
import responses

from provider_doubles import HTTP_KITS, Kit, strip_cache_markers, strip_slot
from tests.support.recording_tool import RECORDING_TOOL
from tests.support.vessel_contract import TURNS, Provider
from webui.models import Conversation, Vessel
from webui.prompt_types import Prompt
from webui.text.canonical import canonical_json
from webui.turns.service import outcome_of, run_turn, stream_turn
from webui.vessels.registry import adapter_for

pytestmark = pytest.mark.django_db

FIXED_NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


class TestAdapterContract:
    """What every one of the seven adapters promises."""

    def test_a_plain_turn_saves_the_reply_and_normalised_usage(
        self, chat: Conversation, provider: Provider
    ) -> None:
        result = run_turn(conversation=chat, text="hello")

        reply = result.assistant_message
        assert reply.content in ("Echo: hello", "(offline) I heard: “hello”")
        assert set(reply.usage) == {
            "input_tokens",
            "output_tokens",
            "cached_input_tokens",
            "cache_write_tokens",
        }
        assert reply.usage["input_tokens"] > 0
        assert len(provider.requests) == 1

    def test_the_memory_tool_is_rendered_in_the_providers_format(
        self, chat: Conversation, provider: Provider
    ) -> None:
        run_turn(conversation=chat, text="hello")

        request = provider.requests[0]
        assert provider.kit.tool_names(request) == ["memory"]
        assert provider.kit.tool_schema(request) == RECORDING_TOOL.input_schema

    def test_a_tool_call_runs_and_its_result_is_replayed_in_the_providers_shape(
        self, chat: Conversation, provider: Provider, recording_tool: Any
    ) -> None:
        result = run_turn(conversation=chat, text="remember Zoë likes tea")

        assert len(recording_tool.calls) == 1
        assert recording_tool.calls[0].input == {"verb": "remember", "text": "Zoë likes tea"}
        use = result.assistant_message.tool_uses[0]
        assert (use["output"]["echo"], use["output"]["verb"]) == ("Zoë likes tea", "remember")
        assert use["id"]
        assert "Zoë likes tea" in result.assistant_message.content
        assert len(provider.requests) == 2
        final = provider.requests[1]
        _, results = provider.kit.last_turn(final)
        assert [(r["echo"], r["verb"]) for r in results] == [("Zoë likes tea", "remember")]
        # Each result answers the call just before it, by the id the provider checks.
        calls, answered = provider.kit.call_links(final)
        assert answered == calls
        if provider.kit.has_ids:
            assert calls == [use["id"]]

    # The offline vessel makes one call per message by design, so this runs on the six providers.
    @pytest.mark.parametrize("kit", HTTP_KITS, indirect=True, ids=lambda k: k.adapter)
    def test_parallel_calls_and_text_beside_them_replay_in_order(
        self, chat: Conversation, provider: Provider, recording_tool: Any
    ) -> None:
        run_turn(conversation=chat, text="recall tea && coffee")
        result = run_turn(conversation=chat, text="thanks")

        first = chat.messages.order_by("sequence")[1]
        assert [u["input"]["text"] for u in first.tool_uses] == ["tea", "coffee"]
        assert len({u["id"] for u in first.tool_uses}) == 2
        assert first.rounds[0]["text"] == "Let me look."
        calls, answered = provider.kit.call_links(provider.requests[1])
        assert answered == calls
        assert len(calls) == 2
        assert result.assistant_message.content == "Echo: thanks"

    def test_tool_call_ids_replay_identically_in_later_turns(
        self, chat: Conversation, provider: Provider
    ) -> None:
        run_turn(conversation=chat, text="recall tea")
        run_turn(conversation=chat, text="thanks")

        tool_round = provider.requests[1][provider.kit.messages_key]
        later = provider.requests[2][provider.kit.messages_key]
        stable, removed = strip_slot(strip_cache_markers(tool_round))
        assert removed == 1
        assert strip_cache_markers(later[: len(stable)]) == stable

    def test_requests_are_byte_stable_from_turn_to_turn(
        self, chat: Conversation, provider: Provider
    ) -> None:
        boundaries = []
        for text in TURNS:
            boundaries.append(len(provider.requests))
            run_turn(conversation=chat, text=text)
        boundaries.append(len(provider.requests))
        requests = [strip_cache_markers(r) for r in provider.requests]
        key = provider.kit.messages_key
        tool_turns = sum(1 for t in TURNS if t.split()[0] in ("remember", "recall", "ask"))
        assert len(requests) == len(TURNS) + tool_turns

        def head(request: dict[str, Any]) -> str:
            return canonical_json({k: v for k, v in request.items() if k != key})

        # System text, tool definitions and settings never move.
        assert len({head(r) for r in requests}) == 1
        for turn in range(len(TURNS)):
            first, last = boundaries[turn], boundaries[turn + 1] - 1
            # Within a turn, each tool round extends the previous call, slot and all.
            for index in range(first, last):
                earlier = requests[index][key]
                later = requests[index + 1][key]
                assert [canonical_json(m) for m in later[: len(earlier)]] == [
                    canonical_json(m) for m in earlier
                ]
            if turn + 1 == len(TURNS):
                break
            # Across turns, only the per-turn slot drops out.
            stable, removed = strip_slot(requests[last][key])
            assert removed == 1
            following = requests[boundaries[turn + 1]][key]
            assert [canonical_json(m) for m in following[: len(stable)]] == [
                canonical_json(m) for m in stable
            ]
            assert len(following) > len(stable)

    def test_a_streamed_turn_saves_the_same_rows_and_the_next_request_is_the_same(
        self,
        chat: Conversation,
        provider: Provider,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Issue 15's one turn path: the same talk, once with whole replies and once streamed,
        leaves the same rows, and the request that follows is the same bytes either way."""
        monkeypatch.setattr("webui.prompt.assembly.timezone.now", lambda: FIXED_NOW)
        talk = ["hello", "remember Zoë likes tea", "recall tea && coffee", "thanks"]

        def converse(conversation: Conversation, *, streamed: bool) -> tuple[str, str]:
            for text in talk:
                outcome_of(stream_turn(conversation=conversation, text=text, streamed=streamed))
            start = len(provider.requests)
            run_turn(conversation=conversation, text="and the next one?")
            (following,) = provider.requests[start:]
            rows = [
                [m.role, m.content, m.tool_uses, m.rounds, m.usage, m.stopped]
                for m in conversation.messages.order_by("sequence")
            ]
            saved, sent = canonical_json(rows), canonical_json(following)
            # Ids that differ between two conversations by design: the conversation's own, and
            # the tool-use ids (the scripted provider numbers them; derived ids hash message ids).
            # (Gemini's thought signatures are the provider's per call, numbered the same way.)
            uses = [
                value
                for m in conversation.messages.order_by("sequence")
                for u in m.tool_uses
                for value in (u["id"], (u.get("meta") or {}).get("thought_signature"))
                if value
            ]
            for index, use_id in enumerate([str(conversation.id), *uses]):
                saved = saved.replace(use_id, f"<{index}>")
                sent = sent.replace(use_id, f"<{index}>")
            return saved, sent

        whole = converse(chat, streamed=False)
        streamed = converse(
            Conversation.objects.create(soul=chat.soul, vessel=chat.vessel, viewer=chat.viewer),
            streamed=True,
        )

        assert streamed == whole
        if provider.rsps is not None:  # the second talk really streamed
            asked = [provider.kit.wants_stream(call.request) for call in provider.rsps.calls]
            assert any(asked)
            assert not all(asked)

    def test_structured_mode_sends_no_tools_and_returns_the_object(
        self, kit: Kit, vessel: Vessel, provider: Provider
    ) -> None:
        schema = {
            "type": "object",
            "properties": {"choice": {"type": "string", "enum": ["tea", "coffee"]}},
            "required": ["choice"],
            "additionalProperties": False,
        }
        if provider.rsps is not None:
            provider.rsps.replace(
                responses.POST, kit.served_url, json=kit.text_body('{"choice": "tea"}')
            )
        prompt = Prompt(
            conversation_id="brain-1",
            system_sections=("Decide.",),
            history=(),
            user_text="Tea or coffee?",
            user_message_id="m1",
        )

        reply = adapter_for(vessel).complete_structured(
            prompt=prompt, schema=schema, schema_name="decide"
        )

        assert reply.data == {"choice": "tea"}
        request = provider.requests[0]
        assert kit.tool_names(request) == []
        assert "tools" not in request
        assert schema in json_values(request)


def json_values(value: Any) -> list[Any]:
    """Every dict and list nested in ``value``, to find the schema wherever the provider puts it."""
    found = [value]
    if isinstance(value, dict):
        for item in value.values():
            found.extend(json_values(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(json_values(item))
    return found
