"""What a vessel's stream yields (Interface 1 of issue 15): text pieces, tool calls as they begin,
and, always last, the whole reply exactly as :meth:`VesselAdapter.complete` would give it."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webui.vessels.base import VesselReply


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, in order."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The vessel began a tool call: its id and name are known, its arguments may still arrive."""

    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ReplyDone:
    """Always last: the reply ``complete()`` would have returned for the same answer."""

    reply: "VesselReply"


StreamEvent = TextDelta | ToolCallStarted | ReplyDone
