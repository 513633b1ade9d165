"""A provider double's prompt cache, for ``bench/prompt_cache.py`` and the ledger's tests: what
each provider would report as read from (and written to) its cache for a sequence of requests, and
(:func:`serve_cached`, :func:`offline_cached`) a kit's provider answering with that usage in the
fields the provider reports it in.

A request is read the way the providers cache it: **tools, then system, then messages**, each as
the canonical JSON the adapter sends for it (``webui.text.canonical``), with cache markers
(``cache_control``) removed, one *unit* per part and per message. Prefixes match whole units from
the start of the request: a provider caches at block boundaries, not at any byte. The per-turn
slot (the ``Current time:`` part after the newest user text) is left out of what is cached: it sits
at the end of a request, past every prefix a later request can share, and leaving it out lets
unit matching stand in for the providers' finer, block-level matching inside the newest message.
Bytes are counted as the cache ledger counts them (``webui.ledger.recorder.stable_prefix``): tools, system,
then the messages as one JSON list; a token is 4 bytes.

- **Anthropic** writes a cache entry at each ``cache_control`` breakpoint (the prefix up to the
  marked block) and reads the longest entry a request starts with; a prefix shorter than the
  model's minimum cacheable length is neither written nor read (it answers with no cache fields
  raised, as Anthropic does, silently).
- **OpenAI, Gemini, llama.cpp-style servers and the offline vessel** cache automatically: a
  request reads its longest common prefix with any earlier request, if that prefix reaches the
  minimum length; nothing is charged for writing.
- **Ollama** reuses its KV cache the same way, but reports only the tokens it evaluated
  (``prompt_eval_count``): no cached count reaches the ledger.

Minimum lengths come from the price table (``webui.published_prices``), the same one the bill uses.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import responses

from provider_doubles.base import Kit, brain

#: The seven adapters, in the order the bench prints them.
ADAPTERS = (
    "anthropic",
    "openai",
    "openai_responses",
    "gemini",
    "ollama",
    "openai_compatible",
    "offline",
)
#: The model each adapter's vessel names here: it decides prices and minimum lengths.
MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5",
    "openai_responses": "gpt-5",
    "gemini": "gemini-2.5-flash",
    "ollama": "llama3.2",
    "openai_compatible": "local-model",
    "offline": "offline-1",
}

TOKEN_BYTES = 4
SLOT_PREFIX = "Current time:"
SYSTEM_ROLES = {"system", "developer"}


def tokens(size: int) -> int:
    return size // TOKEN_BYTES


def _without_slot(message: dict[str, Any]) -> dict[str, Any] | None:
    """``message`` with its per-turn slot part removed; ``None`` when it is only the slot."""
    for key in ("content", "parts"):
        content = message.get(key)
        if isinstance(content, str) and content.startswith(SLOT_PREFIX):
            return None
        if isinstance(content, list):
            kept = [
                part
                for part in content
                if not (
                    isinstance(part, dict) and str(part.get("text", "")).startswith(SLOT_PREFIX)
                )
            ]
            if not kept:
                return None
            return {**message, key: kept}
    return message


@dataclass(frozen=True)
class CacheRead:
    """What a provider reports for one request, in tokens."""

    prompt: int
    read: int
    written: int


@dataclass
class ProviderCache:
    """One conversation's cache at one provider (the bench keeps one per adapter)."""

    adapter: Any  # the VesselAdapter whose keys say where tools, system and messages are
    minimum: int
    explicit: bool  # Anthropic: entries only at cache_control breakpoints
    entries: list[tuple[bytes, ...]] = field(default_factory=list)

    def units(self, body: dict[str, Any]) -> tuple[list[bytes], list[bytes], list[int], int]:
        """``(front, messages, marked, whole)``: the tools and system units, the message units
        (slot left out), the indexes of the messages that carry a cache marker, and the size of
        the whole request (slot included)."""
        from webui.text.canonical import canonical_bytes
        from webui.vessels.encoding import without_markers

        request = without_markers(body, self.adapter.cache_marker_keys)
        raw = list(body.get(self.adapter.messages_key) or [])
        messages = list(request.get(self.adapter.messages_key) or [])
        leading = 0
        if self.adapter.system_key is None:
            while leading < len(messages) and messages[leading].get("role") in SYSTEM_ROLES:
                leading += 1
            system: Any = messages[:leading]
        else:
            system = request.get(self.adapter.system_key)
        front = [
            canonical_bytes(request.get(self.adapter.tools_key) or []),
            canonical_bytes(system),
        ]
        units, marked = [], []
        whole = self.size(front, [canonical_bytes(m) for m in messages[leading:]])
        for index in range(leading, len(messages)):
            kept = _without_slot(messages[index])
            if kept is None:
                continue
            if "cache_control" in json.dumps(raw[index]):
                marked.append(len(units))
            units.append(canonical_bytes(kept))
        return front, units, marked, whole

    @staticmethod
    def size(front: list[bytes], messages: tuple[bytes, ...] | list[bytes]) -> int:
        return (
            sum(len(part) for part in front)
            + 2
            + sum(len(m) for m in messages)
            + max(0, len(messages) - 1)
        )

    def report_for(self, body: dict[str, Any]) -> CacheRead:
        """What the provider reports for the request ``body``, and the cache after it."""
        front, messages, marked, whole = self.units(body)
        key = tuple(front)
        best = 0
        for entry in self.entries:
            if entry[:2] != key:
                continue
            shared = 0
            for mine, theirs in zip(messages, entry[2:], strict=False):
                if mine != theirs:
                    break
                shared += 1
            if self.explicit and shared < len(entry) - 2:
                continue  # Anthropic reads an entry only when the request starts with all of it
            best = max(best, tokens(self.size(front, messages[:shared])))
        read = best if best >= self.minimum else 0
        written = 0
        if self.explicit:
            for cut in [0, *([marked[-1] + 1] if marked else [])]:
                entry_tokens = tokens(self.size(front, messages[:cut]))
                if entry_tokens >= self.minimum:
                    self.entries.append((*front, *messages[:cut]))
                    written = max(0, entry_tokens - read)
        else:
            self.entries.append((*front, *messages))
        return CacheRead(prompt=max(tokens(whole), read + written), read=read, written=written)


def with_usage(adapter: str, body: dict[str, Any], seen: CacheRead, output: int) -> dict[str, Any]:
    """``body`` with its usage replaced by what the double saw, in the provider's own fields."""
    if adapter == "anthropic":
        uncached = seen.prompt - seen.read - seen.written
        body["usage"] = {
            "input_tokens": uncached,
            "cache_creation_input_tokens": seen.written,
            "cache_read_input_tokens": seen.read,
            "output_tokens": output,
        }
    elif adapter in ("openai", "openai_compatible"):
        body["usage"] = {
            "prompt_tokens": seen.prompt,
            "completion_tokens": output,
            "total_tokens": seen.prompt + output,
            "prompt_tokens_details": {"cached_tokens": seen.read},
        }
    elif adapter == "openai_responses":
        body["usage"] = {
            "input_tokens": seen.prompt,
            "input_tokens_details": {"cached_tokens": seen.read},
            "output_tokens": output,
            "total_tokens": seen.prompt + output,
        }
    elif adapter == "gemini":
        body["usageMetadata"] = {
            "promptTokenCount": seen.prompt,
            "cachedContentTokenCount": seen.read,
            "candidatesTokenCount": output,
            "totalTokenCount": seen.prompt + output,
        }
    elif adapter == "ollama":  # the KV cache is reused, but only evaluated tokens are reported
        body["prompt_eval_count"] = seen.prompt - seen.read
        body["eval_count"] = output
    return body


def serve_cached(rsps: responses.RequestsMock, kit: Kit, cache: ProviderCache) -> None:
    """Answer ``kit``'s endpoint as :meth:`Kit.serve` does (not streamed), with the usage
    ``cache`` reports for each request."""
    counter = [0]

    def respond(request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        user_text, results = kit.last_turn(body)
        said = brain(user_text, results, counter)
        reply = (
            kit.call_body(said["calls"], said["text"])
            if said["calls"]
            else kit.text_body(said["text"])
        )
        seen = cache.report_for(body)
        reply = with_usage(kit.adapter, reply, seen, output=tokens(len(said["text"])) + 1)
        return 200, {"Content-Type": "application/json"}, json.dumps(reply)

    rsps.add_callback(responses.POST, kit.served_url, callback=respond)


def offline_cached(cache: ProviderCache, original: Callable[..., Any]) -> Callable[..., Any]:
    """The offline vessel's ``send`` (``original``) with the usage ``cache`` reports in its
    response."""

    def send(self: Any, request: dict[str, Any]) -> dict[str, Any]:
        response = original(self, request)
        seen = cache.report_for(request)
        response["usage"] = {
            "input_tokens": seen.prompt,
            "output_tokens": response["usage"]["output_tokens"],
            "cached_input_tokens": seen.read,
        }
        return response

    return send
