"""Google Gemini (``POST {base}/v1beta/models/{model}:generateContent``).

The system text is ``systemInstruction``; the model's turns have role ``model``; tool calls are
``functionCall`` parts and go back as ``functionResponse`` parts in a user turn. Newer models give
each call an ``id`` and a ``thoughtSignature``: both are kept on the tool use and sent back as they
came (Gemini 3 requires the signature). Calls without an id get one derived from the turn.
"""

from collections.abc import Sequence
from typing import Any

from webui.prompt import Prompt, ToolCall, ToolDefinition, ToolUse
from webui.vessels.base import Message, VesselReply, derived_call_id, normalised_usage
from webui.vessels.errors import VesselError, error_member, error_object_fields
from webui.vessels.http import RequestsAdapter


class GeminiAdapter(RequestsAdapter):
    adapter_name = "gemini"
    label = "Google Gemini"
    provider_name = "Gemini"
    default_base_url = "https://generativelanguage.googleapis.com"

    def endpoint(self, request: dict[str, Any]) -> str:
        return f"{self.base_url}/v1beta/models/{self.vessel.model}:generateContent"

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

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        config = {
            **request["generationConfig"],
            "responseMimeType": "application/json",
            "responseJsonSchema": schema,
        }
        return {**request, "generationConfig": config}

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
