"""A stand-in memory tool for host tests, which answers every call with what it was asked."""

from typing import Any

from webui.extensions import TurnContext, TurnExtension
from webui.prompt_types import ToolCall, ToolDefinition

RECORDING_TOOL = ToolDefinition(
    name="memory",
    description="A stand-in memory tool for host tests.",
    input_schema={
        "type": "object",
        "properties": {"verb": {"type": "string"}, "text": {"type": "string"}},
        "required": ["verb", "text"],
    },
)


class RecordingTool(TurnExtension):
    """Offers a ``memory`` tool and answers every call with what it was asked."""

    name = "recording-tool"
    offers_memory_tool = True
    memory_tool_name = "memory"

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def tools(self, *, turn: TurnContext) -> list[ToolDefinition]:
        return [RECORDING_TOOL]

    def execute_tool(self, *, turn: TurnContext, call: ToolCall) -> tuple[bool, Any]:
        if call.name != "memory":
            return False, None
        self.calls.append(call)
        # Values that a JSON column changes on the way back (integer keys, a huge float) are in
        # the output on purpose: later turns must still replay this turn's bytes.
        return True, {
            "echo": call.input["text"],
            "verb": call.input["verb"],
            "big": 1e20,
            "ratio": 0.1,
            "order": {10: "ten", 2: "two"},
        }
