"""Ollama's chat API, as its reference documents it."""

import json
from typing import Any

from provider_doubles.base import SLOT_PREFIX, USAGE, Kit, pieces, trailing_tool_messages


class OllamaKit(Kit):
    adapter = "ollama"
    model = "llama3.2"
    url = "http://127.0.0.1:11434/api/chat"
    key_env = None
    has_ids = False

    def _chat(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": self.model,
            "created_at": "2026-12-02T14:13:43.416799Z",
            "message": message,
            "done": True,
            "done_reason": "stop",
            "total_duration": 5191566416,
            "load_duration": 2154458,
            "prompt_eval_count": USAGE["prompt"],
            "prompt_eval_duration": 383809000,
            "eval_count": USAGE["output"],
            "eval_duration": 4799921000,
        }

    def text_body(self, text: str) -> dict[str, Any]:
        return self._chat({"role": "assistant", "content": text})

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        return self._chat(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {"function": {"name": call["name"], "arguments": call["input"]}}
                    for call in calls
                ],
            }
        )

    framing = "ndjson"

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        # Each line a chat response with the next piece; tool calls come whole; the last line
        # is done, with the counts.
        partial = {"model": self.model, "created_at": "2026-12-02T14:13:43.416799Z", "done": False}
        records: list[Any] = [
            {**partial, "message": {"role": "assistant", "content": piece}}
            for piece in pieces(text)
        ]
        if calls:
            message = self.call_body(calls)["message"]
            records.append({**partial, "message": {**message, "content": ""}})
        return [*records, self.text_body("")]

    def stream_error(self) -> Any:
        return {"error": "an error was encountered while running the model: unexpected EOF"}

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        before, results = trailing_tool_messages(request["messages"])
        calls = [c["function"]["name"] for c in before[-1]["tool_calls"]]
        return calls, [r["tool_name"] for r in results]

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, message = {
            "rate_limited": (429, "too many requests"),
            "overloaded": (503, "server busy, please try again"),
            "server_error": (500, "llama runner process has terminated"),
            "auth_failed": (401, "unauthorized"),
            "forbidden": (403, "forbidden"),
            "bad_request": (400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        }[kind]
        return status, {"error": message}, {"Retry-After": "3"} if kind == "rate_limited" else {}

    def error_message(self, body: dict[str, Any]) -> str:
        return body["error"]

    def error_code(self, body: dict[str, Any]) -> str | None:
        return None

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        messages = [
            m for m in request["messages"] if not str(m.get("content", "")).startswith(SLOT_PREFIX)
        ]
        before, results = trailing_tool_messages(messages)
        if results:
            return None, [json.loads(r["content"]) for r in results]
        return before[-1]["content"], []

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["function"]["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["function"]["parameters"]

    def auth_ok(self, headers: Any) -> bool:
        return "Authorization" not in headers
