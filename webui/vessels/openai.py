"""OpenAI Chat Completions (``POST {base}/chat/completions``, base ``https://api.openai.com/v1``).

The system text is the first message; tool calls come back in ``message.tool_calls`` with their
arguments as a JSON string, and go back as ``role: "tool"`` messages. ``prompt_cache_key`` is the
conversation id, so every turn of a conversation is routed to the same cache.
"""

from collections.abc import Sequence
from typing import Any, ClassVar

from webui.prompt_types import Prompt, ToolCall, ToolDefinition, ToolUse, derived_call_id
from webui.text.canonical import canonical_json
from webui.vessels.base import (
    Message,
    VesselReply,
    bearer_headers,
    normalised_usage,
    parse_json_arguments,
    text_parts_message,
)
from webui.vessels.errors import error_member, error_object_fields
from webui.vessels.http import RequestsAdapter
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import StreamParser


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


def function_calls(message: dict[str, Any], *, prompt: Prompt) -> tuple[ToolCall, ...]:
    """The tool calls in an OpenAI Chat shape response's ``message`` (Ollama's too), arguments as
    an object whether they came as one or as a JSON string; a call without an id gets one
    derived from the turn."""
    return tuple(
        ToolCall(
            id=call.get("id") or derived_call_id(prompt, index),
            name=(call.get("function") or {}).get("name", ""),
            input=parse_json_arguments((call.get("function") or {}).get("arguments")),
        )
        for index, call in enumerate(message.get("tool_calls") or [])
    )


def chat_reply(message: dict[str, Any], *, prompt: Prompt, usage: dict[str, int]) -> VesselReply:
    """The reply in an OpenAI Chat shape response's ``message`` (Ollama's too): its content as the
    text, its tool calls (:func:`function_calls`), with the ``usage`` the provider counted."""
    text = message.get("content") or ""
    return VesselReply(text=text, tool_calls=function_calls(message, prompt=prompt), usage=usage)


class ChatCompletionStream(StreamParser):
    """OpenAI Chat Completions chunks (and OpenAI-compatible servers'), assembled into the
    completion they describe.

    Each chunk's ``choices[0].delta`` carries a piece of the text, or pieces of tool calls keyed
    by ``index``: the first piece of a call has its ``id`` and name, the later ones more of its
    ``arguments`` string. With ``include_usage`` the usage comes in a last chunk whose
    ``choices`` is empty (llama.cpp adds ``timings``); ``data: [DONE]`` ends the stream. A chunk
    with an ``error`` member ends it with that error.
    """

    end_marker = b"[DONE]"
    transient_errors = frozenset({"server_error", "rate_limit_exceeded"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: dict[int, dict[str, Any]] = {}
        self.totals: dict[str, Any] = {}
        self.finish_reason: str | None = None

    def read(self, record: Any) -> list[PartialEvent]:
        error = error_member(record)
        if error:
            message, code = error_object_fields(error, "code", "type")
            raise self.failure(message or error, provider_code=code)
        for key in ("usage", "timings"):
            if record.get(key):
                self.totals[key] = record[key]
        events: list[PartialEvent] = []
        for choice in record.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            events += self.text(delta.get("content") or "")
            for piece in delta.get("tool_calls") or []:
                events += self.add_call_piece(piece)
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        return events

    def add_call_piece(self, piece: dict[str, Any]) -> list[PartialEvent]:
        key = piece.get("index", 0)
        call = self.calls.setdefault(
            key, {"id": None, "name": None, "arguments": [], "started": False}
        )
        function = piece.get("function") or {}
        call["id"] = call["id"] or piece.get("id")
        call["name"] = call["name"] or function.get("name")
        call["arguments"].append(function.get("arguments") or "")
        if call["started"] or not call["name"]:
            return []
        call["started"] = True
        # A server that gives no ids gets the ones the finished reply derives (by position).
        position = list(self.calls).index(key)
        call_id = call["id"] or derived_call_id(self.prompt, position)
        return [self.call_started(id=call_id, name=call["name"])]

    def response(self) -> Any:
        # A server that ends without ``[DONE]`` has still marked the end if the usage chunk
        # (which comes last) followed the finish reason.
        self.finished = self.finished or (self.finish_reason is not None and "usage" in self.totals)
        return super().response()

    def assembled(self) -> Any:
        tool_calls = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"] or "", "arguments": "".join(call["arguments"])},
            }
            for call in self.calls.values()
        ]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.said) or None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {"object": "chat.completion", "choices": [choice], **self.totals}


class ChatRolesAdapter(RequestsAdapter):
    """What OpenAI Chat and Ollama's ``/api/chat`` share: the system text as the first message,
    assistant texts as plain strings, and the key (when there is one) as a bearer token."""

    system_key = None  # the system text is the first message

    def headers(self) -> dict[str, str]:
        return bearer_headers(self.vessel.api_key)

    def render_system(self, text: str) -> list[Message]:
        return [{"role": "system", "content": text}]

    def render_assistant_text(self, text: str) -> list[Message]:
        return [{"role": "assistant", "content": text}]


class OpenAIAdapter(ChatRolesAdapter):
    adapter_name = "openai"
    provider_name = "OpenAI"
    default_base_url = "https://api.openai.com/v1"
    stream_parser_class: ClassVar[type[StreamParser] | None] = ChatCompletionStream

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/chat/completions"

    def stream_request(self, request: dict[str, Any]) -> dict[str, Any]:
        # Without include_usage the stream carries no usage at all.
        return {**request, "stream": True, "stream_options": {"include_usage": True}}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "messages": self.render_conversation(prompt),
            "max_completion_tokens": self.vessel.max_output_tokens,
            "prompt_cache_key": prompt.conversation_id,
        }
        if tools:
            request["tools"] = function_tools(tools)
        return request

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        return [text_parts_message("user", (text, *slot))]

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        calls = [
            {
                "id": use.id,
                "type": "function",
                "function": {"name": use.name, "arguments": canonical_json(use.input)},
            }
            for use in tool_uses
        ]
        return [{"role": "assistant", "content": text or None, "tool_calls": calls}]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        return [
            {"role": "tool", "tool_call_id": use.id, "content": canonical_json(use.output)}
            for use in tool_uses
        ]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        choices = response.get("choices") or [{}]
        message = choices[0].get("message") or {}
        usage = response.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens")
        if cached is None:
            # llama.cpp's OpenAI endpoint on older builds reports the reused prefix here instead.
            cached = (response.get("timings") or {}).get("cache_n") or 0
        counted = normalised_usage(
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            cached_input_tokens=cached,
        )
        return chat_reply(message, prompt=prompt, usage=counted)

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        error = error_member(body)
        if isinstance(error, str):
            return error, None
        return error_object_fields(error, "code", "type")
