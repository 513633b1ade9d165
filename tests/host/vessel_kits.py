"""One kit per adapter: provider payloads shaped as each provider documents them, a scripted
"brain" that answers like the offline vessel would (a verb message calls the memory tool, a tool
result gets a reply, anything else an echo), and readers for the requests the adapter sent.

The payloads follow ``../shared/reference/providers.md`` and the providers' API references.
"""

import io
import json
import re
from collections.abc import Callable
from typing import Any

import responses

VERB = re.compile(r"\A\s*(remember|recall|ask)\s+(\S.*)\Z", re.IGNORECASE | re.DOTALL)
SLOT_PREFIX = "Current time:"
#: Anthropic alone reports a cache write ("written"); the others report none.
USAGE = {"prompt": 1200, "cached": 1024, "written": 100, "output": 17}


def brain(user_text: str | None, results: list[Any], counter: list[int]) -> dict[str, Any]:
    """What the scripted provider says: ``{"text", "calls": [{id, name, input}]}``.

    A verb message calls the memory tool; ``a && b`` makes two parallel calls, and a recall says
    something beside its calls. A tool result gets a reply naming what came back.
    """
    if results:
        echoes = [r.get("echo") if isinstance(r, dict) else r for r in results]
        return {"text": "Done: " + json.dumps(echoes, ensure_ascii=False), "calls": []}
    match = VERB.match(user_text or "")
    if not match:
        return {"text": f"Echo: {user_text}", "calls": []}
    verb, text = match.group(1).lower(), match.group(2).strip()
    calls = []
    for part in text.split("&&"):
        counter[0] += 1
        calls.append(
            {
                "id": f"toolu_{counter[0]:04d}",
                "name": "memory",
                "input": {"verb": verb, "text": part.strip()},
            }
        )
    return {"text": "Let me look." if verb == "recall" else "", "calls": calls}


def pieces(text: str, size: int = 4) -> list[str]:
    """``text`` cut into pieces of ``size`` characters, as a stream sends it (none when empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


class PacedBody(io.RawIOBase):
    """A streamed body that arrives ``size`` bytes a read (so records, lines and characters
    split between reads), then ends, or breaks off with ``failure`` as a cut connection does."""

    def __init__(self, data: bytes, *, size: int = 37, failure: BaseException | None = None):
        super().__init__()
        self.remaining = data
        self.size = size
        self.failure = failure

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.remaining:
            if self.failure is not None:
                raise self.failure
            return 0
        piece = self.remaining[: min(self.size, len(buffer))]
        self.remaining = self.remaining[len(piece) :]
        buffer[: len(piece)] = piece
        return len(piece)


def paced(data: bytes, **kwargs: Any) -> io.BufferedReader:
    """A ``responses`` body that streams ``data`` as :class:`PacedBody` does."""
    return io.BufferedReader(PacedBody(data, **kwargs))


def strip_cache_markers(value: Any) -> Any:
    """The request with Anthropic's ``cache_control`` markers set aside (they move each turn)."""
    if isinstance(value, dict):
        return {k: strip_cache_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_markers(v) for v in value]
    return value


def strip_slot(messages: list[Any]) -> tuple[list[Any], int]:
    """``messages`` without the per-turn slot, and how many slot parts were removed."""
    removed = 0
    kept = []
    for message in messages:
        content_key = next((k for k in ("content", "parts") if k in message), None)
        content = message.get(content_key) if content_key else None
        if isinstance(content, str) and content.startswith(SLOT_PREFIX):
            removed += 1
            continue
        if isinstance(content, list):
            parts = [
                p
                for p in content
                if not (isinstance(p, dict) and str(p.get("text", "")).startswith(SLOT_PREFIX))
            ]
            removed += len(content) - len(parts)
            message = {**message, content_key: parts}
        kept.append(message)
    return kept, removed


class Kit:
    """The parts of a provider a contract test needs."""

    adapter: str
    model = "test-model"
    base_url = ""
    key_env: str | None = "TEST_PROVIDER_KEY"
    url: str
    messages_key = "messages"
    has_ids = True

    # -- answers -------------------------------------------------------------------------------
    def text_body(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        raise NotImplementedError

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        """The ids of the calls in the last assistant turn, and the ids its results answer."""
        raise NotImplementedError

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``(status, body, headers)`` for an error class, in the provider's shape."""
        raise NotImplementedError

    def error_message(self, body: dict[str, Any]) -> str:
        """Where this provider documents its error message."""
        return body["error"]["message"]

    def error_code(self, body: dict[str, Any]) -> str | None:
        """Where this provider documents its error code."""
        raise NotImplementedError

    # -- reading requests ------------------------------------------------------------------------
    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        """The newest user text, or the tool results the request ends with."""
        raise NotImplementedError

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def auth_ok(self, headers: Any) -> bool:
        return headers.get("Authorization") == "Bearer sk-test-SECRET"

    # -- streamed answers ------------------------------------------------------------------------
    #: How the provider frames a streamed answer, and whether its SSE events name their type.
    framing = "sse"
    named_events = False
    #: The keys a streamed request adds to the request ``complete()`` sends.
    stream_switch: tuple[str, ...] = ("stream",)

    @property
    def stream_url(self) -> str:
        return self.url

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        """The records of a streamed answer saying what ``call_body``/``text_body`` say."""
        raise NotImplementedError

    def stream_error(self) -> Any:
        """The record a provider sends when it breaks off mid-answer (an overload, say)."""
        raise NotImplementedError

    def frame(self, records: list[Any]) -> bytes:
        """``records`` as the provider puts them on the wire (``[DONE]`` and the like as is)."""
        if self.framing == "ndjson":
            return b"".join(json.dumps(record).encode() + b"\n" for record in records)
        events = []
        for record in records:
            named = self.named_events and isinstance(record, dict)
            events.append(
                (f"event: {record['type']}\n" if named else "")
                + f"data: {record if isinstance(record, str) else json.dumps(record)}\n\n"
            )
        return "".join(events).encode()

    def streamed(self, records: list[Any], **body: Any) -> tuple[int, dict[str, str], Any]:
        """A ``responses`` callback result streaming ``records`` (``body`` as for :func:`paced`)."""
        kind = "application/x-ndjson" if self.framing == "ndjson" else "text/event-stream"
        return 200, {"Content-Type": kind}, paced(self.frame(records), **body)

    def wants_stream(self, request: Any) -> bool:
        if self.stream_url != self.url:
            return request.url == self.stream_url
        return json.loads(request.body).get("stream") is True

    # -- serving ---------------------------------------------------------------------------------
    def serve(self, rsps: responses.RequestsMock) -> None:
        """Answer every request as :func:`brain` says, streamed when the request asks for it."""
        counter = [0]

        def answer(request: Any) -> tuple[int, dict[str, str], Any]:
            body = json.loads(request.body)
            user_text, results = self.last_turn(body)
            said = brain(user_text, results, counter)
            if self.wants_stream(request):
                return self.streamed(self.stream_records(said["calls"], said["text"]))
            if said["calls"]:
                reply = self.call_body(said["calls"], said["text"])
            else:
                reply = self.text_body(said["text"])
            return 200, {"Content-Type": "application/json"}, json.dumps(reply)

        rsps.add_callback(responses.POST, self.served_url, callback=answer)

    @property
    def served_url(self) -> str | re.Pattern[str]:
        """What :meth:`serve` registers: the one endpoint, or one pattern for both when the
        provider streams at another URL (Gemini), so a conversation that calls only one of them
        leaves no registered request unfired."""
        if self.stream_url == self.url:
            return self.url
        either = "|".join(re.escape(url.split("?")[0]) for url in (self.url, self.stream_url))
        return re.compile(rf"^({either})(\?.*)?$")

    def queue(self, rsps: responses.RequestsMock, status: int, body: Any, **headers: str) -> None:
        rsps.add(responses.POST, self.url, json=body, status=status, headers=headers)


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
        messages = request["messages"]
        results = []
        index = len(messages) - 1
        while messages[index]["role"] == "tool":
            results.insert(0, messages[index]["tool_call_id"])
            index -= 1
        calls = [c["id"] for c in messages[index]["tool_calls"]]
        return calls, results

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
        messages = request["messages"]
        results = []
        for message in reversed(messages):
            if message["role"] != "tool":
                break
            results.insert(0, json.loads(message["content"]))
        return (None, results) if results else (messages[-1]["content"][0]["text"], [])

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


class GeminiKit(Kit):
    adapter = "gemini"
    model = "gemini-2.5-flash"
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    messages_key = "contents"
    has_ids = False

    def _response(self, parts: list[Any]) -> dict[str, Any]:
        return {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": USAGE["prompt"],
                "candidatesTokenCount": USAGE["output"],
                "totalTokenCount": USAGE["prompt"] + USAGE["output"],
                "cachedContentTokenCount": USAGE["cached"],
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": USAGE["prompt"]}],
            },
            "modelVersion": self.model,
            "responseId": "mI3EaJ2aBrKvkdUPyIeQ-AQ",
        }

    def text_body(self, text: str) -> dict[str, Any]:
        return self._response([{"text": text}])

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        parts.extend(
            {
                "functionCall": {"name": call["name"], "args": call["input"]},
                "thoughtSignature": "CiQBVKhc7oJ8" + call["id"][-4:],
            }
            for call in calls
        )
        return self._response(parts)

    @property
    def stream_url(self) -> str:
        return self.url.replace(":generateContent", ":streamGenerateContent?alt=sse")

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        # Each event is a whole GenerateContentResponse with the next parts; function calls
        # come whole, and the last event has the finish reason and the full usage.
        final = self.call_body(calls) if calls else self.text_body("")
        records = []
        for piece in pieces(text):
            record = self._response([{"text": piece}])
            del record["candidates"][0]["finishReason"]
            record["usageMetadata"] = {
                "promptTokenCount": USAGE["prompt"],
                "totalTokenCount": USAGE["prompt"],
            }
            records.append(record)
        if not calls:
            final["candidates"][0]["content"]["parts"] = []
        return [*records, final]

    def stream_error(self) -> Any:
        return {
            "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
        }

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        # Gemini pairs a response with its call by name and position (or by id on newer models).
        calls = [
            p["functionCall"]["name"]
            for p in request["contents"][-2]["parts"]
            if "functionCall" in p
        ]
        results = [p["functionResponse"]["name"] for p in request["contents"][-1]["parts"]]
        return calls, results

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, code = {
            "rate_limited": (429, "RESOURCE_EXHAUSTED"),
            "overloaded": (503, "UNAVAILABLE"),
            "server_error": (500, "INTERNAL"),
            "auth_failed": (401, "UNAUTHENTICATED"),
            "forbidden": (403, "PERMISSION_DENIED"),
            "bad_request": (400, "INVALID_ARGUMENT"),
        }[kind]
        body = {"error": {"code": status, "message": f"Gemini says {kind}", "status": code}}
        return status, body, {"Retry-After": "3"} if kind == "rate_limited" else {}

    def error_code(self, body: dict[str, Any]) -> str | None:
        return body["error"]["status"]

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        parts = request["contents"][-1]["parts"]
        results = [p["functionResponse"]["response"] for p in parts if "functionResponse" in p]
        return (None, results) if results else (parts[0]["text"], [])

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [d["name"] for t in request.get("tools", []) for d in t["functionDeclarations"]]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["functionDeclarations"][0]["parameters"]

    def auth_ok(self, headers: Any) -> bool:
        return headers.get("x-goog-api-key") == "sk-test-SECRET"


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
        messages = request["messages"]
        results = []
        index = len(messages) - 1
        while messages[index]["role"] == "tool":
            results.insert(0, messages[index]["tool_name"])
            index -= 1
        calls = [c["function"]["name"] for c in messages[index]["tool_calls"]]
        return calls, results

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
        results = []
        for message in reversed(messages):
            if message["role"] != "tool":
                break
            results.insert(0, json.loads(message["content"]))
        return (None, results) if results else (messages[-1]["content"], [])

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["function"]["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["function"]["parameters"]

    def auth_ok(self, headers: Any) -> bool:
        return "Authorization" not in headers


class OfflineKit(Kit):
    """The offline vessel answers itself; its requests are captured before it does."""

    adapter = "offline"
    key_env = None

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        calls = [p["id"] for p in request["messages"][-2]["content"] if p["type"] == "tool_call"]
        results = [p["tool_call_id"] for p in request["messages"][-1]["content"]]
        return calls, results

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        last = request["messages"][-1]
        if last["role"] == "tool":
            return None, [json.loads(p["output"]) for p in last["content"]]
        return last["content"][0]["text"], []

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["input_schema"]


HTTP_KITS: list[Callable[[], Kit]] = [
    AnthropicKit,
    OpenAIKit,
    OpenAIResponsesKit,
    GeminiKit,
    OllamaKit,
    OpenAICompatibleKit,
]
ALL_KITS: list[Callable[[], Kit]] = [*HTTP_KITS, OfflineKit]


def kit_vessel(kit: Kit, monkeypatch: Any, **fields: Any) -> Any:
    """A saved vessel for ``kit``, with its key variable set (``monkeypatch`` undoes it)."""
    from webui.models import Vessel

    if kit.key_env:
        monkeypatch.setenv(kit.key_env, "sk-test-SECRET")
    fields.setdefault("slug", "v")
    fields.setdefault("name", kit.adapter)
    return Vessel.objects.create(
        adapter=kit.adapter,
        model=kit.model,
        base_url=kit.base_url,
        api_key_env=kit.key_env or "",
        **fields,
    )
