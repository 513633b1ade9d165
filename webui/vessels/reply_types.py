"""What a vessel call gives back, as the prompt's types say what it is given
(:mod:`webui.prompt_types`): the reply whole (:class:`VesselReply`, its usage in the host's one
shape, and a structured-mode :class:`StructuredReply`), or as it arrives (the events
:meth:`VesselAdapter.stream <webui.vessels.base.VesselAdapter.stream>` yields: :class:`TextDelta`
and :class:`ToolCallStarted` pieces, then one :class:`ReplyDone`).
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
    """A structured-mode reply: the parsed JSON object, the text it came from, and usage."""

    data: dict[str, Any]
    text: str
    usage: dict[str, int]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text; the pieces, in order, make up the reply's text."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The vessel began tool call ``index`` (0 first, its place in the reply's ``tool_calls``):
    its id and name are known, its arguments may still be arriving."""

    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ReplyDone:
    """Always last: the reply ``complete()`` would have returned for the same response, checked."""

    reply: VesselReply


#: What :meth:`VesselAdapter.stream` yields.
StreamEvent = TextDelta | ToolCallStarted | ReplyDone
#: What a parser gives for one record: everything but the final :class:`ReplyDone`.
PartialEvent = TextDelta | ToolCallStarted
