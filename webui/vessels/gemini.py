"""Google Gemini (``POST {base}/v1beta/models/{model}:generateContent``).

The system text is ``systemInstruction``; the model's turns have role ``model``; tool calls are
``functionCall`` parts and go back as ``functionResponse`` parts in a user turn. Newer models give
each call an ``id`` and a ``thoughtSignature``: both are kept on the tool use and sent back as they
came (Gemini 3 requires the signature). Calls without an id get one derived from the turn.
"""

from collections.abc import Sequence
from typing import Any

from webui.prompt_types import Prompt, ToolCall, ToolDefinition, ToolUse, derived_call_id
from webui.vessels.base import Message, VesselReply, normalised_usage
from webui.vessels.errors import VesselError, error_member, error_object_fields
from webui.vessels.http import RequestsAdapter
from webui.vessels.reply_types import PartialEvent
from webui.vessels.streaming import StreamParser


class GeminiStream(StreamParser):
    """Gemini's ``streamGenerateContent`` with ``alt=sse``: each event's data is a whole
    ``GenerateContentResponse`` holding the next parts of the candidate (text pieces, and
    ``functionCall`` parts that arrive whole), assembled into one response with all the parts in
    order. The last carries the ``usageMetadata`` and a ``finishReason``; there is no end marker
    beyond that (a blocked prompt ends with ``promptFeedback`` instead). An event with an
    ``error`` member ends the stream.
    """

    transient_errors = frozenset({"INTERNAL", "UNAVAILABLE", "RESOURCE_EXHAUSTED"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.parts: list[dict[str, Any]] = []
        self.answered = False
        self.latest: dict[str, Any] = {}

    def read(self, record: Any) -> list[PartialEvent]:
        error = error_member(record)
        if error:
            message, status = error_object_fields(error, "status")
            raise self.failure(message, provider_code=status)
        for key in ("usageMetadata", "promptFeedback", "modelVersion", "responseId"):
            if key in record:
                self.latest[key] = record[key]
        if (record.get("promptFeedback") or {}).get("blockReason"):
            self.finished = True
        events: list[PartialEvent] = []
        for candidate in (record.get("candidates") or [])[:1]:
            self.answered = True
            self.finished = self.finished or bool(candidate.get("finishReason"))
            for part in (candidate.get("content") or {}).get("parts") or []:
                events += self.add_part(part)
        return events

    def add_part(self, part: dict[str, Any]) -> list[PartialEvent]:
        self.parts.append(part)
        if "functionCall" in part:
            call = part["functionCall"]
            return [self.call_arrived(call, id=call.get("id"), name=call.get("name", ""))]
        if "text" in part and not part.get("thought"):
            return self.text(part["text"])
        return []

    def assembled(self) -> Any:
        content = {"role": "model", "parts": self.parts}
        return {"candidates": [{"content": content}] if self.answered else [], **self.latest}


class GeminiAdapter(RequestsAdapter):
    adapter_name = "gemini"
    provider_name = "Gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    stream_parser_class = GeminiStream
    system_key = "systemInstruction"
    messages_key = "contents"

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/v1beta/models/{self.vessel.model}:generateContent"

    def stream_endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/v1beta/models/{self.vessel.model}:streamGenerateContent?alt=sse"

    def stream_request(self, request: dict[str, Any]) -> dict[str, Any]:
        return request  # Gemini streams at a URL of its own; the body is the same

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.vessel.api_key}

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "systemInstruction": {"parts": [{"text": prompt.system_text}]},
            "contents": self.render_conversation(prompt),
            "generationConfig": {"maxOutputTokens": self.vessel.max_output_tokens},
        }
        if tools:
            request["tools"] = [
                {
                    "functionDeclarations": [
                        {"name": t.name, "description": t.description, "parameters": t.input_schema}
                        for t in tools
                    ]
                }
            ]
        return request

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        return [{"role": "user", "parts": [{"text": part} for part in (text, *slot)]}]

    def render_assistant_text(self, text: str) -> list[Message]:
        # Gemini refuses a turn with no parts.
        return [{"role": "model", "parts": [{"text": text}]}] if text else []

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        parts: list[Message] = [{"text": text}] if text else []
        for use in tool_uses:
            call: dict[str, Any] = {"name": use.name, "args": use.input}
            if use.meta.get("provider_id"):
                call["id"] = use.meta["provider_id"]
            part: dict[str, Any] = {"functionCall": call}
            if use.meta.get("thought_signature"):
                part["thoughtSignature"] = use.meta["thought_signature"]
            parts.append(part)
        return [{"role": "model", "parts": parts}]

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        responses = []
        for use in tool_uses:
            response: dict[str, Any] = {
                "name": use.name,
                "response": use.output if isinstance(use.output, dict) else {"result": use.output},
            }
            if use.meta.get("provider_id"):
                response["id"] = use.meta["provider_id"]
            responses.append({"functionResponse": response})
        return [{"role": "user", "parts": responses}]

    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        config = {
            **request["generationConfig"],
            "responseMimeType": "application/json",
            "responseJsonSchema": schema,
        }
        return {"generationConfig": config}

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        candidates = response.get("candidates") or []
        if not candidates:
            reason = (response.get("promptFeedback") or {}).get("blockReason")
            raise VesselError(
                f"Gemini gave no answer{f' (blocked: {reason})' if reason else ''}.",
                code="no_answer",
            )
        texts, calls = [], []
        for part in (candidates[0].get("content") or {}).get("parts") or []:
            if "functionCall" in part:
                function_call = part["functionCall"]
                meta = {}
                if function_call.get("id"):
                    meta["provider_id"] = function_call["id"]
                if part.get("thoughtSignature"):
                    meta["thought_signature"] = part["thoughtSignature"]
                calls.append(
                    ToolCall(
                        id=function_call.get("id") or derived_call_id(prompt, len(calls)),
                        name=function_call.get("name", ""),
                        input=function_call.get("args") or {},
                        meta=meta,
                    )
                )
            elif "text" in part and not part.get("thought"):
                texts.append(part["text"])
        usage = response.get("usageMetadata") or {}
        return VesselReply(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=normalised_usage(
                input_tokens=usage.get("promptTokenCount") or 0,
                output_tokens=usage.get("candidatesTokenCount") or 0,
                cached_input_tokens=usage.get("cachedContentTokenCount") or 0,
            ),
        )

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        if isinstance(body, list) and body:
            body = body[0]  # Google wraps some error bodies in a list
        return error_object_fields(error_member(body), "status")
