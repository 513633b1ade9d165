"""OpenAI's Chat Completions and Responses APIs, and an OpenAI-compatible local server."""

import json
from typing import Any

from provider_doubles.base import USAGE, Kit, pieces, trailing_tool_messages


class OpenAIKit(Kit):
    adapter = "openai"
    url = "https://api.openai.com/v1/chat/completions"

    def _completion(self, message: dict[str, Any], finish: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
            "object": "chat.completion",
            "created": 1741570283,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": USAGE["prompt"],
                "completion_tokens": USAGE["output"],
                "total_tokens": USAGE["prompt"] + USAGE["output"],
                "prompt_tokens_details": {"cached_tokens": USAGE["cached"], "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
            "service_tier": "default",
            "system_fingerprint": "fp_06737a9306",
        }

    def text_body(self, text: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        return self._completion(message, "stop")

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        message = {
            "role": "assistant",
            "content": text or None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": call["id"].replace("toolu", "call"),
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["input"])},
                }
                for call in calls
            ],
        }
        return self._completion(message, "tool_calls")

    stream_switch = ("stream", "stream_options")

    def _chunk(self, delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
        """A ``chat.completion.chunk``; with no ``delta``, the usage chunk (empty ``choices``)."""
        full = self._completion({}, "stop")
        chunk = {k: full[k] for k in ("id", "created", "model", "system_fingerprint")}
        chunk["object"] = "chat.completion.chunk"
        if delta is None:
            return {
                **chunk,
                "choices": [],
                **{k: v for k, v in full.items() if k in ("usage", "timings")},
            }
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**chunk, "choices": [choice], "usage": None}

    def _call_start(self, index: int, call: dict[str, Any]) -> dict[str, Any]:
        return {
            "index": index,
            "id": call["id"].replace("toolu", "call"),
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        records = [self._chunk({"role": "assistant", "content": "", "refusal": None})]
        records += [self._chunk({"content": piece}) for piece in pieces(text)]
        for index, call in enumerate(calls):
            records.append(self._chunk({"tool_calls": [self._call_start(index, call)]}))
            records += [
                self._chunk({"tool_calls": [{"index": index, "function": {"arguments": a}}]})
                for a in pieces(json.dumps(call["input"]), 6)
            ]
        records.append(self._chunk({}, "tool_calls" if calls else "stop"))
        return [*records, self._chunk(None), "[DONE]"]

    def stream_error(self) -> Any:
        return {
            "error": {
                "message": "The server had an error",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        before, results = trailing_tool_messages(request["messages"])
        return [c["id"] for c in before[-1]["tool_calls"]], [r["tool_call_id"] for r in results]

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, error_type, code = {
            "rate_limited": (429, "requests", "rate_limit_exceeded"),
            "quota_exhausted": (429, "insufficient_quota", "insufficient_quota"),
            "overloaded": (503, "server_error", None),
            "server_error": (500, "server_error", None),
            "auth_failed": (401, "invalid_request_error", "invalid_api_key"),
            "forbidden": (403, "invalid_request_error", "unsupported_country_region_territory"),
            "bad_request": (400, "invalid_request_error", "invalid_value"),
        }[kind]
        body = {
            "error": {
                "message": f"OpenAI says {kind}",
                "type": error_type,
                "param": None,
                "code": code,
            }
        }
        return status, body, {"retry-after": "3"} if kind == "rate_limited" else {}

    def error_code(self, body: dict[str, Any]) -> str | None:
        return body["error"]["code"] or body["error"]["type"]

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        before, results = trailing_tool_messages(request["messages"])
        if results:
            return None, [json.loads(r["content"]) for r in results]
        return before[-1]["content"][0]["text"], []

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["function"]["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["function"]["parameters"]


class OpenAICompatibleKit(OpenAIKit):
    """llama.cpp's OpenAI endpoint: no key, its own base URL, the reused prefix in ``timings``."""

    adapter = "openai_compatible"
    has_ids = False
    base_url = "http://127.0.0.1:8080/v1"
    url = "http://127.0.0.1:8080/v1/chat/completions"
    key_env = None

    def _completion(self, message: dict[str, Any], finish: str) -> dict[str, Any]:
        body = super()._completion(message, finish)
        del body["usage"]["prompt_tokens_details"]
        body["timings"] = {
            "cache_n": USAGE["cached"],
            "prompt_n": USAGE["prompt"] - USAGE["cached"],
        }
        return body

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        # Some local servers send tool calls without ids: the adapter must derive stable ones.
        body = super().call_body(calls, text)
        for call in body["choices"][0]["message"]["tool_calls"]:
            del call["id"]
        return body

    def _call_start(self, index: int, call: dict[str, Any]) -> dict[str, Any]:
        start = super()._call_start(index, call)
        del start["id"]
        return start

    def auth_ok(self, headers: Any) -> bool:
        return "Authorization" not in headers


class OpenAIResponsesKit(Kit):
    adapter = "openai_responses"
    url = "https://api.openai.com/v1/responses"
    messages_key = "input"

    def _response(self, output: list[Any]) -> dict[str, Any]:
        return {
            "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
            "object": "response",
            "created_at": 1741476542,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "model": self.model,
            "output": output,
            "usage": {
                "input_tokens": USAGE["prompt"],
                "input_tokens_details": {"cached_tokens": USAGE["cached"]},
                "output_tokens": USAGE["output"],
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": USAGE["prompt"] + USAGE["output"],
            },
        }

    def text_body(self, text: str) -> dict[str, Any]:
        return self._response(
            [
                {
                    "type": "message",
                    "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ]
        )

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if text:
            output.append(self.text_body(text)["output"][0])
        output.extend(
            {
                "type": "function_call",
                "id": "fc_" + call["id"],
                "call_id": call["id"].replace("toolu", "call"),
                "name": call["name"],
                "arguments": json.dumps(call["input"]),
                "status": "completed",
            }
            for call in calls
        )
        return self._response(output)

    named_events = True

    def _item_events(self, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The events that stream one output item, from ``added`` to ``done``."""
        ids = {"item_id": item["id"], "output_index": index}
        opened = {**item, "status": "in_progress"}
        if item["type"] == "function_call":
            opened["arguments"] = ""
            events = [
                {"type": "response.function_call_arguments.delta", **ids, "delta": a}
                for a in pieces(item["arguments"], 6)
            ]
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **ids,
                    "arguments": item["arguments"],
                }
            )
        else:
            opened["content"] = []
            part = item["content"][0]
            at = {**ids, "content_index": 0}
            events = [
                {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
                *(
                    {"type": "response.output_text.delta", **at, "delta": d, "logprobs": []}
                    for d in pieces(part["text"])
                ),
                {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []},
                {"type": "response.content_part.done", **at, "part": part},
            ]
        added = {"type": "response.output_item.added", "output_index": index, "item": opened}
        done = {"type": "response.output_item.done", "output_index": index, "item": item}
        return [added, *events, done]

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        final = self.call_body(calls, text) if calls else self.text_body(text)
        started = {**final, "status": "in_progress", "output": [], "usage": None}
        events = [
            {"type": "response.created", "response": started},
            {"type": "response.in_progress", "response": started},
        ]
        for index, item in enumerate(final["output"]):
            events += self._item_events(index, item)
        events.append({"type": "response.completed", "response": final})
        return [{**event, "sequence_number": n} for n, event in enumerate(events)]

    def stream_error(self) -> Any:
        return {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error while processing your request.",
            "param": None,
            "sequence_number": 99,
        }

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        items = request["input"]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        results = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
        last_calls = calls[-len(results) :] if results else []
        return last_calls, results[-len(last_calls) :] if last_calls else []

    error = OpenAIKit.error
    error_code = OpenAIKit.error_code

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        items = request["input"]
        results = []
        for item in reversed(items):
            if item.get("type") != "function_call_output":
                break
            results.insert(0, json.loads(item["output"]))
        return (None, results) if results else (items[-1]["content"][0]["text"], [])

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["parameters"]
