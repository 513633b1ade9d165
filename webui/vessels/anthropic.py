"""Anthropic Messages API (``POST /v1/messages``).

Tools come back as ``tool_use`` content blocks and go back as ``tool_result`` blocks in the next user
message. Two ``cache_control`` breakpoints mark the stable prefix: the end of the system text (tools
sit before it in Anthropic's prefix order) and the newest user message's own text, so the next turn
reads everything up to there from the cache.
"""

from collections.abc import Sequence
from typing import Any

from webui.canonical import canonical_json
from webui.prompt import Prompt, ToolCall, ToolDefinition, ToolUse
from webui.vessels.base import (
    Message,
    VesselReply,
    normalised_usage,
    text_part,
    text_parts_message,
)
from webui.vessels.errors import error_member, error_object_fields
from webui.vessels.http import RequestsAdapter

API_VERSION = "2023-06-01"
CACHE = {"type": "ephemeral"}


class AnthropicAdapter(RequestsAdapter):
    adapter_name = "anthropic"
    label = "Anthropic Messages"
    provider_name = "Anthropic"
    default_base_url = "https://api.anthropic.com"

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

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        return {**request, "output_config": {"format": {"type": "json_schema", "schema": schema}}}

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
        prompt_size = (
            (usage.get("input_tokens") or 0)
            + (usage.get("cache_creation_input_tokens") or 0)
            + cached
        )
        return VesselReply(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=normalised_usage(
                input_tokens=prompt_size,
                output_tokens=usage.get("output_tokens") or 0,
                cached_input_tokens=cached,
            ),
        )

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        return error_object_fields(error_member(body), "type")
