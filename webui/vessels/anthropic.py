"""Anthropic Messages API (``POST /v1/messages``).

Tools come back as ``tool_use`` content blocks and go back as ``tool_result`` blocks in the next user
message. ``cache_control`` breakpoints mark the stable prefix: the end of the system text (tools
sit before it in Anthropic's prefix order), the newest user message's own text, and, once the turn
has taken tool rounds, its last tool result, so the next round and the next turn read everything
up to there from the cache (Anthropic caches only up to a breakpoint; without the third, a turn
after a tool round would pay for that round again). Three of the four breakpoints allowed.
"""

from collections.abc import Sequence
from typing import Any

from webui.prompt_types import Prompt, ToolCall, ToolDefinition, ToolUse
from webui.text.canonical import canonical_json
from webui.vessels.base import (
    Message,
    VesselReply,
    normalised_usage,
    parse_json_arguments,
    text_part,
    text_parts_message,
)
from webui.vessels.errors import error_member, error_object_fields
from webui.vessels.http import RequestsAdapter
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import StreamParser

API_VERSION = "2023-06-01"
CACHE = {"type": "ephemeral"}


class AnthropicStream(StreamParser):
    """Anthropic's streamed Messages events, assembled into the Message they describe.

    ``message_start`` carries the Message with empty content and the usage so far; each content
    block comes as ``content_block_start``, its ``content_block_delta``s (``text_delta`` text,
    ``input_json_delta`` pieces of the tool input's JSON) and ``content_block_stop``;
    ``message_delta`` carries the final usage (its counts are cumulative) and ``message_stop``
    ends the answer. ``ping`` and event types this adapter does not know are passed over; an
    ``error`` event ends the stream.
    """

    transient_errors = frozenset({"overloaded_error", "api_error", "rate_limit_error"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks: dict[int, dict[str, Any]] = {}
        self.input_json: dict[int, list[str]] = {}
        self.usage: dict[str, Any] = {}

    def read(self, record: Any) -> list[PartialEvent]:
        kind = record["type"]
        if kind == "message_start":
            self.usage.update(record["message"].get("usage") or {})
        elif kind == "content_block_start":
            return self.start_block(record["index"], dict(record["content_block"]))
        elif kind == "content_block_delta":
            return self.add_delta(record["index"], record["delta"])
        elif kind == "message_delta":
            usage = record.get("usage") or {}
            self.usage.update({key: value for key, value in usage.items() if value is not None})
        elif kind == "message_stop":
            self.finished = True
        elif kind == "error":
            error = record.get("error") or {}
            raise self.failure(error.get("message"), provider_code=error.get("type"))
        return []

    def start_block(self, index: int, block: dict[str, Any]) -> list[PartialEvent]:
        self.blocks[index] = block
        if block["type"] == "tool_use":
            return [self.call_started(id=block["id"], name=block["name"])]
        return self.text(block.get("text", "")) if block["type"] == "text" else []

    def add_delta(self, index: int, delta: dict[str, Any]) -> list[PartialEvent]:
        block = self.blocks[index]
        if delta["type"] == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            return self.text(delta["text"])
        if delta["type"] == "input_json_delta":
            self.input_json.setdefault(index, []).append(delta["partial_json"])
        return []

    def assembled(self) -> Any:
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.input_json:
                block = {**block, "input": parse_json_arguments("".join(self.input_json[index]))}
            content.append(block)
        return {"type": "message", "content": content, "usage": self.usage}


class AnthropicAdapter(RequestsAdapter):
    adapter_name = "anthropic"
    provider_name = "Anthropic"
    default_base_url = "https://api.anthropic.com"
    stream_parser_class = AnthropicStream
    cache_marker_keys = frozenset({"cache_control"})

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.vessel.api_key, "anthropic-version": API_VERSION}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "max_tokens": self.vessel.max_output_tokens,
            "system": [{**text_part(prompt.system_text), "cache_control": CACHE}],
            "messages": self.render_conversation(prompt),
        }
        if prompt.current_rounds:
            last = request["messages"][-1]  # the user message with the round's tool results
            *before, final = last["content"]
            last["content"] = [*before, {**final, "cache_control": CACHE}]
        if tools:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in tools
            ]
        return request

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        return [text_parts_message("user", (text, *slot))]

    def render_newest_user(self, text: str, *, slot: Sequence[str]) -> list[Message]:
        # The second breakpoint: next turn reads everything up to the newest text from the cache.
        newest = [{**text_part(text), "cache_control": CACHE}]
        return [{"role": "user", "content": newest + [text_part(part) for part in slot]}]

    def render_assistant_text(self, text: str) -> list[Message]:
        # Anthropic refuses empty text blocks.
        return [text_parts_message("assistant", (text,))] if text else []

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        calls = [text_part(text)] if text else []
        calls += [
            {"type": "tool_use", "id": use.id, "name": use.name, "input": use.input}
            for use in tool_uses
        ]
        return [{"role": "assistant", "content": calls}]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        results = []
        for use in tool_uses:
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": use.id,
                "content": canonical_json(use.output),
            }
            if isinstance(use.output, dict) and "error" in use.output:
                result["is_error"] = True
            results.append(result)
        return [{"role": "user", "content": results}]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        return {"output_config": {"format": {"type": "json_schema", "schema": schema}}}

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        texts, calls = [], []
        for block in response.get("content") or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append(
                    ToolCall(id=block["id"], name=block["name"], input=block.get("input") or {})
                )
        usage = response.get("usage") or {}
        cached = usage.get("cache_read_input_tokens") or 0
        written = usage.get("cache_creation_input_tokens") or 0
        prompt_size = (usage.get("input_tokens") or 0) + written + cached
        return VesselReply(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=normalised_usage(
                input_tokens=prompt_size,
                output_tokens=usage.get("output_tokens") or 0,
                cached_input_tokens=cached,
                cache_write_tokens=written,
            ),
        )

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        return error_object_fields(error_member(body), "type")
