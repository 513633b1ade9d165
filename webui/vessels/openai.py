"""OpenAI Chat Completions (``POST {base}/chat/completions``, base ``https://api.openai.com/v1``).

The system text is the first message; tool calls come back in ``message.tool_calls`` with their
arguments as a JSON string, and go back as ``role: "tool"`` messages. ``prompt_cache_key`` is the
conversation id, so every turn of a conversation is routed to the same cache.
"""

from collections.abc import Sequence
from typing import Any

from webui.canonical import canonical_json
from webui.prompt import Prompt, ToolCall, ToolDefinition, ToolRound
from webui.vessels.base import (
    VesselReply,
    derived_call_id,
    normalised_usage,
    parse_json_arguments,
    prompt_items,
    slot_text,
)
from webui.vessels.http import RequestsAdapter


def function_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """Tool definitions in the OpenAI Chat shape, which Ollama and local servers share."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _round_messages(tool_round: ToolRound) -> list[dict[str, Any]]:
    call_message = {
        "role": "assistant",
        "content": tool_round.text or None,
        "tool_calls": [
            {
                "id": use.id,
                "type": "function",
                "function": {"name": use.name, "arguments": canonical_json(use.input)},
            }
            for use in tool_round.tool_uses
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": use.id, "content": canonical_json(use.output)}
        for use in tool_round.tool_uses
    ]
    return [call_message, *results]


class OpenAIAdapter(RequestsAdapter):
    adapter_name = "openai"
    provider_name = "OpenAI"
    default_base_url = "https://api.openai.com/v1"

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        key = self.vessel.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": prompt.system_text}]
        for kind, value in prompt_items(prompt):
            if kind == "user":
                messages.append({"role": "user", "content": [_text(value)]})
            elif kind == "assistant":
                messages.append({"role": "assistant", "content": value})
            elif kind == "round":
                messages.extend(_round_messages(value))
            else:
                newest = [_text(value)]
                if prompt.turn_slot:
                    newest.append(_text(slot_text(prompt)))
                messages.append({"role": "user", "content": newest})
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "messages": messages,
            "max_completion_tokens": self.vessel.max_output_tokens,
            "prompt_cache_key": prompt.conversation_id,
        }
        if tools:
            request["tools"] = function_tools(tools)
        return request

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        return {
            **request,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        choices = response.get("choices") or [{}]
        message = choices[0].get("message") or {}
        calls = tuple(
            ToolCall(
                id=call.get("id") or derived_call_id(prompt, index),
                name=(call.get("function") or {}).get("name", ""),
                input=parse_json_arguments((call.get("function") or {}).get("arguments")),
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        )
        usage = response.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens")
        if cached is None:
            # llama.cpp's OpenAI endpoint on older builds reports the reused prefix here instead.
            cached = (response.get("timings") or {}).get("cache_n") or 0
        return VesselReply(
            text=message.get("content") or "",
            tool_calls=calls,
            usage=normalised_usage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
                cached_input_tokens=cached,
            ),
        )

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return error.get("message"), error.get("code") or error.get("type")
        if isinstance(error, str):
            return error, None
        return None, None
