"""Ollama (``POST {base}/api/chat``, base ``http://127.0.0.1:11434``).

Message content is a plain string here, so the per-turn slot travels as a separate user message
right after the newest one, and drops out the next turn like a trailing part would. Tool calls come
back without ids; ids are derived from the turn so replays are stable. Tool results go back as
``role: "tool"`` messages naming the tool. No key is needed; one is sent as a bearer token when the
vessel names an environment variable that holds it (a proxy in front of Ollama, say).
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
from webui.vessels.openai import function_tools


def _round_messages(tool_round: ToolRound) -> list[dict[str, Any]]:
    call_message = {
        "role": "assistant",
        "content": tool_round.text,
        "tool_calls": [
            {"function": {"name": use.name, "arguments": use.input}} for use in tool_round.tool_uses
        ],
    }
    results = [
        {"role": "tool", "content": canonical_json(use.output), "tool_name": use.name}
        for use in tool_round.tool_uses
    ]
    return [call_message, *results]


class OllamaAdapter(RequestsAdapter):
    adapter_name = "ollama"
    provider_name = "Ollama"
    default_base_url = "http://127.0.0.1:11434"
    requires_api_key = False

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/api/chat"

    def headers(self) -> dict[str, str]:
        key = self.vessel.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": prompt.system_text}]
        for kind, value in prompt_items(prompt):
            if kind in ("user", "newest"):
                messages.append({"role": "user", "content": value})
                if kind == "newest" and prompt.turn_slot:
                    messages.append({"role": "user", "content": slot_text(prompt)})
            elif kind == "assistant":
                messages.append({"role": "assistant", "content": value})
            else:
                messages.extend(_round_messages(value))
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "messages": messages,
            "stream": False,
            "options": {"num_predict": self.vessel.max_output_tokens},
        }
        if tools:
            request["tools"] = function_tools(tools)
        return request

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        return {**request, "format": schema}

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        message = response.get("message") or {}
        calls = tuple(
            ToolCall(
                id=call.get("id") or derived_call_id(prompt, index),
                name=(call.get("function") or {}).get("name", ""),
                input=parse_json_arguments((call.get("function") or {}).get("arguments")),
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        )
        return VesselReply(
            text=message.get("content") or "",
            tool_calls=calls,
            usage=normalised_usage(
                input_tokens=response.get("prompt_eval_count") or 0,
                output_tokens=response.get("eval_count") or 0,
            ),
        )

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return body["error"], None
        return None, None
