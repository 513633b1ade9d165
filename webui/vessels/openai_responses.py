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

from webui.prompt_types import Prompt, ToolCall, ToolDefinition, ToolUse
from webui.text.canonical import canonical_json
from webui.vessels.base import Message, VesselReply, normalised_usage, parse_json_arguments
from webui.vessels.errors import VesselError
from webui.vessels.openai import OpenAIAdapter
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import StreamParser


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


class ResponsesStream(StreamParser):
    """OpenAI Responses streaming events, assembled into the response they describe.

    ``response.output_item.added`` opens each output item at its ``output_index`` (a
    ``function_call`` item already has its ``call_id`` and name); ``response.output_text.delta``
    adds text to a message item's content part, ``response.function_call_arguments.delta`` adds
    to a call's arguments string. ``response.completed`` (or ``response.incomplete``, or
    ``response.failed``) carries the final response with its usage and ends the answer; the
    ``*.done`` events restate what the deltas said and are passed over. An ``error`` event ends
    the stream.
    """

    transient_errors = frozenset({"server_error", "rate_limit_exceeded"})
    FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] = {}

    def read(self, record: Any) -> list[PartialEvent]:
        kind = record["type"]
        if kind == "response.output_item.added":
            return self.add_item(record["output_index"], dict(record["item"]))
        if kind == "response.output_text.delta":
            parts = self.items[record["output_index"]]["content"]
            index = record.get("content_index", 0)
            while len(parts) <= index:
                parts.append({"type": "output_text", "text": "", "annotations": []})
            parts[index]["text"] += record["delta"]
            return self.text(record["delta"])
        if kind == "response.function_call_arguments.delta":
            self.items[record["output_index"]]["arguments"] += record["delta"]
        elif kind in self.FINAL_EVENTS:
            self.final = record["response"]
            self.finished = True
        elif kind == "error":
            raise self.failure(record.get("message"), provider_code=record.get("code"))
        return []

    def add_item(self, index: int, item: dict[str, Any]) -> list[PartialEvent]:
        self.items[index] = item
        if item["type"] == "message":
            item["content"] = [dict(part) for part in item.get("content") or []]
        elif item["type"] == "function_call":
            item["arguments"] = item.get("arguments") or ""
            call_id = item.get("call_id") or item.get("id", "")
            return [self.call_started(id=call_id, name=item.get("name", ""))]
        return []

    def assembled(self) -> Any:
        return {**self.final, "output": [self.items[index] for index in sorted(self.items)]}


class OpenAIResponsesAdapter(OpenAIAdapter):
    adapter_name = "openai_responses"
    provider_name = "OpenAI"
    stream_parser_class = ResponsesStream
    system_key = "instructions"
    messages_key = "input"

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/responses"

    def stream_request(self, request: dict[str, Any]) -> dict[str, Any]:
        # The final event carries the usage: Responses has no ``include_usage`` to ask for.
        return {**request, "stream": True}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "instructions": prompt.system_text,
            "input": self.render_conversation(prompt),
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

    def render_system(self, text: str) -> list[Message]:
        return []  # the system text goes in ``instructions``

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        content = [_input_text(part) for part in (text, *slot)]
        return [{"type": "message", "role": "user", "content": content}]

    def render_assistant_text(self, text: str) -> list[Message]:
        return [_assistant(text)]

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        items = [_assistant(text)] if text else []
        return items + [
            {
                "type": "function_call",
                "call_id": use.id,
                "name": use.name,
                "arguments": canonical_json(use.input),
            }
            for use in tool_uses
        ]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        return [
            {
                "type": "function_call_output",
                "call_id": use.id,
                "output": canonical_json(use.output),
            }
            for use in tool_uses
        ]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        return {
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
