"""The plug-in's side of the host's extension points."""

from typing import Any

from pippa_memory.conf import memory_settings
from pippa_memory.pinning import pinned_block
from pippa_memory.tool import MEMORY_TOOL, TOOL_NAME, input_problem
from webui.extensions import TurnContext, TurnExtension
from webui.prompt import ToolCall, ToolDefinition


def memory_unavailable(reason: str, message: str) -> dict[str, Any]:
    """The tool result when the engine cannot help: the turn goes on and the model knows why."""
    return {"error": "memory_unavailable", "reason": reason, "message": message}


class MemoryExtension(TurnExtension):
    """Fills the host's extension points with the memory seams and the memory tool."""

    name = "pippa_memory"

    def memory_block(self, *, turn: TurnContext) -> str | None:
        return pinned_block(turn.conversation)

    def tools(self, *, turn: TurnContext) -> list[ToolDefinition]:
        conversation = turn.conversation
        if not memory_settings.ENABLED or conversation.temporary:
            return []
        if not conversation.vessel.memory_tool_enabled:
            return []
        return [MEMORY_TOOL]

    def execute_tool(self, *, turn: TurnContext, call: ToolCall) -> tuple[bool, Any]:
        if call.name != TOOL_NAME:
            return False, None
        problem = input_problem(call.input)
        if problem:
            return True, problem
        if not memory_settings.ENABLED:
            return True, memory_unavailable(
                "memory_disabled", "Memory is switched off for this household; carry on without it."
            )
        if call.input["verb"] == "remember":
            return True, {
                "status": "noted",
                "message": "This will be kept in memory once the turn is saved.",
            }
        return True, memory_unavailable(
            "engine_not_configured",
            "The memory engine is not connected yet, so nothing can be recalled or asked; "
            "carry on without it.",
        )
