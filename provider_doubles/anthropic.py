"""Anthropic's Messages API, as its reference documents it."""

import json
from typing import Any

from provider_doubles.base import USAGE, Kit, pieces


class AnthropicKit(Kit):
    adapter = "anthropic"
    url = "https://api.anthropic.com/v1/messages"

    def _usage(self) -> dict[str, int]:
        return {
            "input_tokens": USAGE["prompt"] - USAGE["cached"] - USAGE["written"],
            "cache_creation_input_tokens": USAGE["written"],
            "cache_read_input_tokens": USAGE["cached"],
            "output_tokens": USAGE["output"],
        }

    def _message(self, content: list[Any], stop: str) -> dict[str, Any]:
        return {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(),
        }

    def text_body(self, text: str) -> dict[str, Any]:
        return self._message([{"type": "text", "text": text}], "end_turn")

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        content = [{"type": "text", "text": text}] if text else []
        content.extend({"type": "tool_use", **call} for call in calls)
        return self._message(content, "tool_use")

    named_events = True

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        # message_start has the input side of the usage; message_delta the output (cumulative).
        start = {**self._message([], None), "usage": {**self._usage(), "output_tokens": 1}}
        records: list[Any] = [{"type": "message_start", "message": start}, {"type": "ping"}]
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if text:
            deltas = [{"type": "text_delta", "text": piece} for piece in pieces(text)]
            blocks.append(({"type": "text", "text": ""}, deltas))
        for call in calls:
            block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
            arguments = ["", *pieces(json.dumps(call["input"]), 6)]
            blocks.append(
                (block, [{"type": "input_json_delta", "partial_json": a} for a in arguments])
            )
        for index, (block, deltas) in enumerate(blocks):
            records.append({"type": "content_block_start", "index": index, "content_block": block})
            records += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            records.append({"type": "content_block_stop", "index": index})
        stop = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
        records.append(
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": USAGE["output"]}}
        )
        return [*records, {"type": "message_stop"}]

    def stream_error(self) -> Any:
        return {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        calls = [p["id"] for p in request["messages"][-2]["content"] if p["type"] == "tool_use"]
        results = [p["tool_use_id"] for p in request["messages"][-1]["content"]]
        return calls, results

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, error_type = {
            "rate_limited": (429, "rate_limit_error"),
            "overloaded": (529, "overloaded_error"),
            "server_error": (500, "api_error"),
            "auth_failed": (401, "authentication_error"),
            "forbidden": (403, "permission_error"),
            "bad_request": (400, "invalid_request_error"),
        }[kind]
        body = {
            "type": "error",
            "error": {"type": error_type, "message": f"Anthropic says {kind}"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        }
        return status, body, {"retry-after": "3"} if kind == "rate_limited" else {}

    def error_code(self, body: dict[str, Any]) -> str | None:
        return body["error"]["type"]

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        content = request["messages"][-1]["content"]
        results = [json.loads(p["content"]) for p in content if p["type"] == "tool_result"]
        return (None, results) if results else (content[0]["text"], [])

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["input_schema"]

    def auth_ok(self, headers: Any) -> bool:
        return (
            headers.get("x-api-key") == "sk-test-SECRET"
            and headers.get("anthropic-version") == "2023-06-01"
        )
