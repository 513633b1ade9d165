"""Running the tool calls a vessel asked for, through the extension that owns each one.

Every failure becomes an error result the vessel reads (the turn goes on); inputs and outputs are
settled as the database will give them back, so a later turn replays the same bytes.
"""

import logging
from collections.abc import Generator
from dataclasses import replace

from webui.extensions import TurnContext, registered_extensions
from webui.prompt_types import ToolCall, ToolRound, ToolUse
from webui.text.canonical import json_roundtrip
from webui.turns.events import ToolFinished, ToolStarted, TurnEvent
from webui.vessels.base import VesselReply

logger = logging.getLogger(__name__)


def execute_tool(turn: TurnContext, call: ToolCall) -> ToolUse:
    """Run ``call`` through the extension that owns it; every failure becomes an error result."""
    for extension in registered_extensions():
        try:
            handled, output = extension.execute_tool(turn=turn, call=call)
        except Exception:
            logger.exception("Tool %s failed in extension %s", call.name, extension.name)
            handled = True
            output = {"error": "tool_failed", "message": f"The {call.name} tool failed; carry on."}
        if handled:
            break
    else:
        output = {"error": "unknown_tool", "message": f"No tool named {call.name!r} is available."}
    # Settle input and output as the database will give them back, so later turns replay the same
    # bytes this turn's next round sends.
    return ToolUse(
        id=call.id,
        name=call.name,
        input=json_roundtrip(call.input),
        output=json_roundtrip(output),
        meta=call.meta,
    )


def unique_calls(calls: tuple[ToolCall, ...], used: set[str]) -> list[ToolCall]:
    """The calls with ids unique in the turn: a provider that repeats an id would otherwise make
    one tool use stand for two when the turn is replayed."""
    unique = []
    for call in calls:
        call_id = call.id
        suffix = 1
        while call_id in used:
            suffix += 1
            call_id = f"{call.id}_{suffix}"
        used.add(call_id)
        unique.append(replace(call, id=call_id) if call_id != call.id else call)
    return unique


def tool_verb(call: ToolCall) -> str | None:
    """The memory tool's verb (``input["verb"]``), for people watching the turn."""
    verb = call.input.get("verb") if isinstance(call.input, dict) else None
    return verb if isinstance(verb, str) else None


def run_tool_round(
    *, turn: TurnContext, reply: VesselReply, used_ids: set[str]
) -> Generator[TurnEvent, None, ToolRound]:
    """Run the reply's tool calls in order, telling each start and finish."""
    uses = []
    for call in unique_calls(reply.tool_calls, used_ids):
        verb = tool_verb(call)
        yield ToolStarted(id=call.id, name=call.name, verb=verb)
        uses.append(execute_tool(turn, call))
        yield ToolFinished(id=call.id, name=call.name, verb=verb)
    return ToolRound(text=reply.text, tool_uses=tuple(uses))
