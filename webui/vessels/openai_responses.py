"""OpenAI Responses API (``POST {base}/responses``, base ``https://api.openai.com/v1``).

The system text goes in ``instructions``; history is resent as input items (``store`` is off, so
nothing is kept at OpenAI between calls): user turns as messages of ``input_text`` parts, earlier
assistant texts as id-less messages with string content. Tool calls come back as ``function_call``
output items and are replayed as id-less ``function_call`` items (``call_id``, name, arguments),
each round's followed by its ``function_call_output`` items. ``prompt_cache_key`` is the
conversation id.
"""

from collections.abc import Sequence
from typing import Any

from webui.canonical import canonical_json
from webui.prompt import Prompt, ToolCall, ToolDefinition, ToolRound
from webui.vessels.base import (
    VesselReply,
    normalised_usage,
    parse_json_arguments,
    prompt_items,
    slot_text,
)
from webui.vessels.errors import VesselError
from webui.vessels.openai import OpenAIAdapter


def _input_text(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def _assistant(text: str) -> dict[str, Any]:
    """An earlier assistant text, replayed as an id-less input message with plain string content.

    The schema allows ``output_text`` parts only in a full output item (``id``, ``status``, and
    ``annotations`` on each part), and with ``store`` off the server holds no item to match an id
    against; the API refuses ``input_text`` parts under the assistant role. A string is the form
    the schema and the API both take.
    """
    return {"type": "message", "role": "assistant", "content": text}


def _round_items(tool_round: ToolRound) -> list[dict[str, Any]]:
    items = [_assistant(tool_round.text)] if tool_round.text else []
    items += [
        {
            "type": "function_call",
            "call_id": use.id,
            "name": use.name,
            "arguments": canonical_json(use.input),
        }
        for use in tool_round.tool_uses
    ]
    items += [
        {"type": "function_call_output", "call_id": use.id, "output": canonical_json(use.output)}
        for use in tool_round.tool_uses
    ]
    return items


class OpenAIResponsesAdapter(OpenAIAdapter):
    adapter_name = "openai_responses"
    provider_name = "OpenAI"

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/responses"

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for kind, value in prompt_items(prompt):
            if kind == "user":
                items.append({"type": "message", "role": "user", "content": [_input_text(value)]})
            elif kind == "assistant":
                items.append(_assistant(value))
            elif kind == "round":
                items.extend(_round_items(value))
            else:
                newest = [_input_text(value)]
                if prompt.turn_slot:
                    newest.append(_input_text(slot_text(prompt)))
                items.append({"type": "message", "role": "user", "content": newest})
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "instructions": prompt.system_text,
            "input": items,
            "max_output_tokens": self.vessel.max_output_tokens,
            "prompt_cache_key": prompt.conversation_id,
            "store": False,
        }
        if tools:
            request["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in tools
            ]
        return request

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        return {
            **request,
            "text": {
                "format": {
                    "type": "json_schema",
                    "name": schema_name,
                    "schema": schema,
                    "strict": True,
                }
            },
        }

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        if response.get("status") == "failed":
            error = response.get("error") or {}
            raise VesselError(
                f"OpenAI could not finish the response: {error.get('message') or 'no reason given'}",
                code="provider_error",
                provider_code=error.get("code"),
            )
        texts, calls = [], []
        for item in response.get("output") or []:
            if item.get("type") == "message":
                texts.extend(
                    part.get("text", "")
                    for part in item.get("content") or []
                    if part.get("type") == "output_text"
                )
            elif item.get("type") == "function_call":
                calls.append(
                    ToolCall(
                        id=item.get("call_id") or item.get("id", ""),
                        name=item.get("name", ""),
                        input=parse_json_arguments(item.get("arguments")),
                    )
                )
        usage = response.get("usage") or {}
        return VesselReply(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=normalised_usage(
                input_tokens=usage.get("input_tokens") or 0,
                output_tokens=usage.get("output_tokens") or 0,
                cached_input_tokens=(usage.get("input_tokens_details") or {}).get("cached_tokens")
                or 0,
            ),
        )
