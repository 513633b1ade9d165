"""Ollama (``POST {base}/api/chat``, base ``http://127.0.0.1:11434``).

Message content is a plain string here, so the per-turn slot travels as a separate user message
right after the newest one, and drops out the next turn like a trailing part would. Tool calls come
back without ids; ids are derived from the turn so replays are stable. Tool results go back as
``role: "tool"`` messages naming the tool. No key is needed; one is sent as a bearer token when the
vessel names an environment variable that holds it (a proxy in front of Ollama, say).
"""

from collections.abc import Sequence
from typing import Any

from webui.prompt_types import Prompt, ToolDefinition, ToolUse
from webui.text.canonical import canonical_json
from webui.vessels.base import Message, VesselReply, normalised_usage
from webui.vessels.errors import error_member
from webui.vessels.openai import ChatRolesAdapter, chat_reply, function_tools
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import StreamParser


class OllamaStream(StreamParser):
    """Ollama's ``/api/chat`` with ``"stream": true``: newline-delimited JSON, each line a chat
    response whose ``message`` holds the next piece of the text (tool calls arrive whole). The
    last line has ``done: true`` and the counts (``prompt_eval_count``, ``eval_count``); a line
    with an ``error`` member ends the stream.
    """

    framing = "ndjson"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.last: dict[str, Any] = {}

    def read(self, record: Any) -> list[PartialEvent]:
        error = error_member(record)
        if error:
            raise self.failure(error, provider_code=None)
        message = record.get("message") or {}
        events = self.text(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            name = (call.get("function") or {}).get("name", "")
            events.append(self.call_arrived(call, id=call.get("id"), name=name))
        if record.get("done"):
            self.last = record
            self.finished = True
        return events

    def assembled(self) -> Any:
        message = {"role": "assistant", "content": "".join(self.said), "tool_calls": self.arrived}
        return {**self.last, "message": message}


class OllamaAdapter(ChatRolesAdapter):
    adapter_name = "ollama"
    provider_name = "Ollama"
    default_base_url = "http://127.0.0.1:11434"
    requires_api_key = False
    stream_parser_class = OllamaStream

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/api/chat"

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.vessel.model,
            "messages": self.render_conversation(prompt),
            "stream": False,
            "options": {"num_predict": self.vessel.max_output_tokens},
        }
        if tools:
            request["tools"] = function_tools(tools)
        return request

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        # Content is a plain string, so the slot is a user message of its own.
        return [{"role": "user", "content": part} for part in (text, *slot)]

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        calls = [{"function": {"name": use.name, "arguments": use.input}} for use in tool_uses]
        return [{"role": "assistant", "content": text, "tool_calls": calls}]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        return [
            {"role": "tool", "content": canonical_json(use.output), "tool_name": use.name}
            for use in tool_uses
        ]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        return {"format": schema}

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        usage = normalised_usage(
            input_tokens=response.get("prompt_eval_count") or 0,
            output_tokens=response.get("eval_count") or 0,
        )
        return chat_reply(response.get("message") or {}, prompt=prompt, usage=usage)

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        error = error_member(body)
        return (error, None) if isinstance(error, str) else (None, None)
