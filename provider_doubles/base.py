"""What every provider double shares: the :class:`Kit` contract, a scripted "brain" that answers
like the offline vessel would (a verb message calls the memory tool, a tool result gets a reply,
anything else an echo), paced bodies for streams, and readers that strip what moves per turn.

The payloads follow the providers' API references (Anthropic Messages, OpenAI Chat Completions and
Responses, Gemini generateContent, Ollama chat), one module per provider beside this one.
"""

import io
import json
import re
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


def trailing_tool_messages(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A chat-shaped conversation (OpenAI Chat Completions, Ollama) cut before its trailing
    ``tool`` messages: what came before them (the calls' assistant message last), then them."""
    end = len(messages)
    while end and messages[end - 1]["role"] == "tool":
        end -= 1
    return messages[:end], messages[end:]


class Kit:
    """The parts of a provider a contract test needs."""

    adapter: str
    model = "test-model"
    base_url = ""
    key_env: str | None = "TEST_PROVIDER_KEY"
    url: str
    messages_key = "messages"
    has_ids = True

    # -- responses -----------------------------------------------------------------------------
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

    # -- streamed responses ----------------------------------------------------------------------
    #: How the provider frames a streamed response, and whether its SSE events name their type.
    framing = "sse"
    named_events = False
    #: The keys a streamed request adds to the request ``complete()`` sends.
    stream_switch: tuple[str, ...] = ("stream",)

    @property
    def stream_url(self) -> str:
        return self.url

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        """The records of a streamed response saying what ``call_body``/``text_body`` say."""
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

        def respond(request: Any) -> tuple[int, dict[str, str], Any]:
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

        rsps.add_callback(responses.POST, self.served_url, callback=respond)

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
