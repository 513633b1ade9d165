"""A stored message is rendered and encoded once per adapter, and the bytes joined from what was
kept are the bytes a whole-request encoding gives: on the wire, in the offline vessel's usage
and in the cache ledger's hashes, for every adapter, over a long conversation with tool rounds."""

from dataclasses import replace
from typing import Any

import pytest

from tests.support.conversations import long_conversation
from webui.ledger.recorder import stable_prefix
from webui.ledger.section_hash import site_hasher
from webui.models import Conversation
from webui.prompt import history
from webui.prompt_types import HistoryMessage, Prompt, ToolDefinition, ToolRound, ToolUse
from webui.text.canonical import canonical_bytes, canonical_json
from webui.vessels.base import VesselAdapter
from webui.vessels.encoding import EncodedMessage, request_bytes, without_markers
from webui.vessels.registry import ADAPTERS, adapter_for

pytestmark = pytest.mark.django_db

TOOLS = (
    ToolDefinition(
        name="memory",
        description="Recall, remember or ask — für alle.",
        input_schema={"type": "object", "properties": {"verb": {"type": "string"}}},
    ),
)
ROUND = ToolRound(
    text="Je regarde…",
    tool_uses=(
        ToolUse(id="call_9", name="memory", input={"verb": "recall"}, output={"found": ["🌱"]}),
    ),
)


def prompts(conversation: Conversation, kept: tuple[HistoryMessage, ...]) -> list[Prompt]:
    """The prompts of one turn over ``kept``: its first call and a call after a tool round."""
    first = Prompt(
        conversation_id=str(conversation.id),
        system_sections=("Vault: the Fernández household.", "", "You talk with Zoë."),
        history=kept,
        user_text="and now? ✓",
        turn_slot=("Current time: 12:00.", "About your earlier question: yes."),
        user_message_id="u",
    )
    return [first, first.with_round(ROUND)]


def whole_encoding_prefix(adapter: VesselAdapter, prompt: Prompt) -> dict[str, Any]:
    """The ledger's stable prefix as it was computed before messages kept their bytes: the whole
    request re-encoded, its markers stripped everywhere."""
    stable = replace(prompt, turn_slot=())
    request = without_markers(
        adapter.build_request(prompt=stable, tools=TOOLS), adapter.cache_marker_keys
    )
    messages = [canonical_bytes(m) for m in request[adapter.messages_key]]
    leading = len(adapter.render_system(prompt.system_text))
    turn = len(adapter.render_turn(stable))
    history_bytes = messages[leading : len(messages) - turn]
    system = canonical_bytes(request[adapter.system_key]) if adapter.system_key else b""
    tools = canonical_bytes(request.get(adapter.tools_key) or [])
    return {
        "history": site_hasher()(b"[" + b",".join(history_bytes) + b"]"),
        "turn": site_hasher()(b"[" + b",".join(messages[len(messages) - turn :]) + b"]"),
        "prefix_bytes": len(tools) + len(system) + len(b"[" + b",".join(messages) + b"]"),
    }


@pytest.mark.parametrize("adapter_class", ADAPTERS, ids=lambda a: a.adapter_name)
def test_bytes_joined_from_kept_messages_are_the_whole_request_encoded(
    adapter_class: type[VesselAdapter], conversation: Conversation, recording_tool: Any
) -> None:
    users = long_conversation(conversation)
    adapter = adapter_class(conversation.vessel)
    history.drop_cached_history(conversation.id)
    checked = 0
    for user_message in users[::7] + users[-1:]:  # turn by turn, as one process answers them
        kept = history.conversation_history(conversation, before=user_message)
        for prompt in prompts(conversation, kept):
            request = adapter.build_request(prompt=prompt, tools=TOOLS)
            body = adapter.wire_body(request) if hasattr(adapter, "wire_body") else request
            assert request_bytes(body, messages_key=adapter.messages_key) == canonical_bytes(body)
            json_mode = adapter.with_json_mode(body, schema={"type": "object"}, schema_name="x")
            assert request_bytes(json_mode, messages_key=adapter.messages_key) == canonical_bytes(
                json_mode
            )

            prefix = stable_prefix(adapter, prompt=prompt, tools=TOOLS)
            whole = whole_encoding_prefix(adapter, prompt)
            assert prefix.sections["history"] == whole["history"]
            assert prefix.sections["turn"] == whole["turn"]
            assert prefix.prefix_bytes == whole["prefix_bytes"]
            checked += 1
    # Building requests never changed what a message kept: its bytes are still its own.
    for message in history.conversation_history(conversation, before=users[-1]):
        for part in message.renderings[adapter_class]:
            assert part.wire == canonical_bytes(dict(part))
    assert checked == 2 * len(users[::7] + users[-1:])


def test_the_offline_vessel_counts_usage_from_the_same_bytes(
    conversation: Conversation, recording_tool: Any
) -> None:
    users = long_conversation(conversation)
    adapter = adapter_for(conversation.vessel)
    kept = history.conversation_history(conversation, before=users[-1])
    request = adapter.build_request(prompt=prompts(conversation, kept)[0], tools=TOOLS)
    assert adapter.send(request)["usage"]["input_tokens"] == len(canonical_json(request)) // 4


def test_a_stored_message_is_rendered_once_per_adapter_class(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[tuple[str, str]] = []
    original = VesselAdapter.render_stored

    def counting(self: VesselAdapter, message: HistoryMessage) -> list[Any]:
        rendered.append((self.adapter_name, message.id))
        return original(self, message)

    monkeypatch.setattr(VesselAdapter, "render_stored", counting)
    kept = (
        HistoryMessage(id="1", role="user", text="hello"),
        HistoryMessage(id="2", role="assistant", text="hi", rounds=(ROUND,)),
    )
    first, second = (adapter_class(conversation.vessel) for adapter_class in ADAPTERS[:2])
    for _ in range(3):
        for adapter in (first, second):
            adapter.build_request(prompt=prompts(conversation, kept)[1], tools=TOOLS)
    assert sorted(rendered) == sorted(
        (adapter.adapter_name, message_id) for adapter in (first, second) for message_id in "12"
    )

    # An equal message that is another object (history read afresh), or a copy, renders anew.
    again = tuple(replace(message) for message in kept)
    assert again == kept
    assert all(not message.renderings for message in again)
    first.build_request(prompt=prompts(conversation, again)[0], tools=TOOLS)
    assert len(rendered) == 6


def test_a_kept_message_with_cache_markers_hashes_without_them() -> None:
    marked = {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {}}]}
    encoded = EncodedMessage(marked, marker_keys=frozenset({"cache_control"}))
    assert encoded == marked
    assert encoded.wire == canonical_bytes(marked)
    assert encoded.stable == canonical_bytes(
        {"role": "user", "content": [{"type": "text", "text": "x"}]}
    )
    plain = EncodedMessage(
        {"role": "user", "content": "x"}, marker_keys=frozenset({"cache_control"})
    )
    assert plain.stable is plain.wire
