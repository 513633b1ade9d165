"""The offline vessel: deterministic, no network, no key.

It exists so the whole turn, tool loop included, can run and be tested with nothing outside the
machine. A message starting ``remember``, ``recall`` or ``ask`` makes it call the ``memory`` tool with
that verb and the rest of the text, then answer from the tool's result in plain sentences
(:mod:`webui.vessels.offline_sentences`); ``remember for everyone …`` remembers the rest with scope
``household``, when the conversation's memory tool takes a scope (one offered before scopes
existed does not, and gets the whole text, as before). Anything else gets a short reply that
depends only on the message. A background answer riding the turn's per-turn slot is said after
the reply: "About your earlier question “…”: …".
"""

import re
import time
from collections.abc import Generator, Sequence
from typing import Any

from webui.conf import webui_settings
from webui.prompt_types import Prompt, ToolCall, ToolDefinition, ToolUse, derived_call_id
from webui.text.canonical import canonical_bytes, canonical_json
from webui.vessels.base import (
    Message,
    VesselAdapter,
    VesselReply,
    normalised_usage,
    text_part,
    text_parts_message,
)
from webui.vessels.encoding import request_bytes
from webui.vessels.offline_sentences import MEMORY_TOOL, reply_from_results, slot_answer_sentences
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import Framing, StreamParser

VERB_MESSAGE = re.compile(r"\A\s*(remember|recall|ask)\s+(\S.*)\Z", re.IGNORECASE | re.DOTALL)
FOR_EVERYONE = re.compile(r"\Afor\s+everyone\b[\s,:]*(\S.*)\Z", re.IGNORECASE | re.DOTALL)
#: A word with the spaces around it: the pieces the offline vessel streams its text in.
WORD_PIECE = re.compile(r"\s*\S+\s*|\s+")


def memory_tool_input(verb: str, text: str, tools: dict[str, Any]) -> dict[str, Any]:
    """The memory tool's input for ``verb`` and ``text``: ``remember for everyone …`` asks for
    scope ``household`` if the tool's schema offers a scope, as a model only uses what it is
    offered."""
    offers_scope = "scope" in tools[MEMORY_TOOL].get("input_schema", {}).get("properties", {})
    everyone = FOR_EVERYONE.match(text) if verb == "remember" and offers_scope else None
    if everyone:
        return {"verb": verb, "text": everyone.group(1).strip(), "scope": "household"}
    return {"verb": verb, "text": text}


def pause_between_pieces() -> None:
    """Wait ``WEBUI_OFFLINE_PACE_SECONDS`` before the offline stream's next piece (0: no wait).

    The offline vessel's stream calls this between the pieces of its reply so that ``make run``'s
    chat page and the browser tests can see a reply arrive piece by piece.
    """
    pace = webui_settings.OFFLINE_PACE_SECONDS
    if pace > 0:
        time.sleep(pace)


def example_for(schema: dict[str, Any]) -> Any:
    """The schema's first example, or the simplest value that fits it (first enum value, minimum,
    required fields only)."""
    if schema.get("examples"):
        return schema["examples"][0]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", list(properties))
        return {name: example_for(properties.get(name, {})) for name in required}
    if kind == "array":
        return [example_for(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * schema.get("minLength", 0)
    if kind in ("number", "integer"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


class OfflineStream(StreamParser):
    """The offline vessel's own stream: its text a word at a time, then its tool calls, then a
    last record with the usage; assembled into the response :meth:`OfflineAdapter.send` gives."""

    framing = "ndjson"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.usage: dict[str, int] = {}

    def read(self, record: Any) -> list[PartialEvent]:
        if "text" in record:
            return self.text(record["text"])
        if "tool_call" in record:
            call = record["tool_call"]
            return [self.call_arrived(call, id=None, name=call["name"])]
        self.usage = record["usage"]
        self.finished = True
        return []

    def assembled(self) -> Any:
        return {"text": "".join(self.said), "tool_calls": self.arrived, "usage": self.usage}


class OfflineAdapter(VesselAdapter):
    """A vessel that answers on this machine, the same way every time."""

    adapter_name = "offline"
    requires_api_key = False
    # It answers a structured request with the schema's first example: nothing is judged.
    reasons = False
    stream_parser_class = OfflineStream

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.vessel.model or "offline",
            "system": prompt.system_text,
            "messages": self.render_conversation(prompt),
        }
        if tools:
            request["tools"] = [tool.as_dict() for tool in tools]
        return request

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        return [text_parts_message("user", (text, *slot))]

    def render_assistant_text(self, text: str) -> list[Message]:
        return [text_parts_message("assistant", (text,))]

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        calls = [
            {"type": "tool_call", "id": use.id, "name": use.name, "input": use.input}
            for use in tool_uses
        ]
        said = [text_part(text)] if text else []
        return [{"role": "assistant", "content": said + calls}]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        results = [
            {"type": "tool_result", "tool_call_id": use.id, "output": canonical_json(use.output)}
            for use in tool_uses
        ]
        return [{"role": "tool", "content": results}]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        return {"response_format": {"name": schema_name, "schema": schema}}

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer ``request`` on this machine, deterministically."""
        last = request["messages"][-1]
        tools = {tool["name"]: tool for tool in request.get("tools", [])}
        calls: list[dict[str, Any]] = []
        if "response_format" in request:
            text = canonical_json(example_for(request["response_format"]["schema"]))
        elif last["role"] == "tool":
            text = with_slot_answers(self._answer_from_results(request), request["messages"])
        else:
            user_text = last["content"][0]["text"]
            text, calls = self._answer_user(user_text, tools)
            if not calls:
                text = with_slot_answers(text, request["messages"])
        prompt_chars = len(request_bytes(request, messages_key=self.messages_key).decode("utf-8"))
        return {
            "text": text,
            "tool_calls": calls,
            "usage": {"input_tokens": prompt_chars // 4, "output_tokens": len(text) // 4},
        }

    def stream_request(self, request: dict[str, Any]) -> dict[str, Any]:
        return request

    def send_stream(
        self, request: dict[str, Any], *, framing: Framing
    ) -> Generator[bytes, None, None]:
        """The response :meth:`send` gives, as the records of a stream: its text word by word."""
        response = self.send(request)
        records: list[dict[str, Any]] = [
            {"text": piece} for piece in WORD_PIECE.findall(response["text"])
        ]
        records += [{"tool_call": call} for call in response["tool_calls"]]
        records.append({"usage": response["usage"]})
        for index, record in enumerate(records):
            if index:
                pause_between_pieces()
            yield canonical_bytes(record)

    def parse_response(self, response: dict[str, Any], *, prompt: Prompt) -> VesselReply:
        calls = tuple(
            ToolCall(id=derived_call_id(prompt, index), name=call["name"], input=call["input"])
            for index, call in enumerate(response["tool_calls"])
        )
        return VesselReply(
            text=response["text"], tool_calls=calls, usage=normalised_usage(**response["usage"])
        )

    def _answer_user(
        self, user_text: str, tools: dict[str, Any]
    ) -> tuple[str, list[dict[str, Any]]]:
        match = VERB_MESSAGE.match(user_text)
        if not match:
            snippet = " ".join(user_text.split())
            if len(snippet) > 200:
                snippet = snippet[:199] + "…"
            return f"(offline) I heard: “{snippet}”", []
        verb, text = match.group(1).lower(), match.group(2).strip()
        if MEMORY_TOOL not in tools:
            return (
                f"(offline) I have no memory tool in this conversation, so I cannot {verb} that.",
                [],
            )
        return "", [{"name": MEMORY_TOOL, "input": memory_tool_input(verb, text, tools)}]

    def _answer_from_results(self, request: dict[str, Any]) -> str:
        messages = request["messages"]
        calls = {
            part["id"]: part for part in messages[-2]["content"] if part.get("type") == "tool_call"
        }
        return reply_from_results(calls, messages[-1]["content"])


def with_slot_answers(text: str, messages: list[Message]) -> str:
    """``text``, then a sentence for each background answer in the newest user message's
    per-turn slot (its parts after the first), so the answer to an earlier ``ask`` is said once,
    in the turn it rides."""
    newest = next(m for m in reversed(messages) if m["role"] == "user")
    said = slot_answer_sentences(part["text"] for part in newest["content"][1:])
    return "\n".join(part for part in (text, *said) if part)
