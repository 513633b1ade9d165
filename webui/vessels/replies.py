"""What a vessel call gives back, whole: the reply, its usage in the host's one shape, and a
structured-mode answer. A leaf below both the adapter base and the stream parsers, which name it.
"""

from dataclasses import dataclass, field
from typing import Any

from webui.prompt_types import ToolCall
from webui.text.lone_surrogates import lone_surrogate_path


def normalised_usage(
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> dict[str, int]:
    """Usage in the one shape the host stores, whatever the provider called its fields.

    ``input_tokens`` is the whole prompt, cached part included (Anthropic reports the uncached
    remainder, so its adapter adds the cache reads and writes back in); ``cached_input_tokens`` is
    the part the provider read from its prompt cache, ``cache_write_tokens`` the part this call
    wrote to it (only Anthropic reports one; 0 elsewhere).
    """
    return {
        "input_tokens": int(input_tokens or 0),
        "output_tokens": int(output_tokens or 0),
        "cached_input_tokens": int(cached_input_tokens or 0),
        "cache_write_tokens": int(cache_write_tokens or 0),
    }


@dataclass(frozen=True)
class VesselReply:
    """What one vessel call gave back: text, tool calls (possibly both) and normalised usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: dict[str, int] = field(default_factory=normalised_usage)


def reply_lone_surrogate_path(reply: VesselReply) -> str | None:
    """Where ``reply``'s text or tool calls hold a lone surrogate ("its text", "tool call 0
    (input/query)"), or ``None``."""
    if lone_surrogate_path(reply.text):
        return "its text"
    for index, call in enumerate(reply.tool_calls):
        found = lone_surrogate_path({"id": call.id, "name": call.name, "input": call.input})
        if found:
            return f"tool call {index} ({found})"
    return None


@dataclass(frozen=True)
class StructuredReply:
    """A structured-mode answer: the parsed JSON object, the text it came from, and usage."""

    data: dict[str, Any]
    text: str
    usage: dict[str, int]
