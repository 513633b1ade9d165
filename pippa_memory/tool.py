"""The one memory tool: ``memory`` with verbs ``recall``, ``remember`` and ``ask`` and one text.

One tool with several verbs is a smaller surface to keep consistent across seven adapters than one
tool per verb. Its definition never changes within a conversation: the host stores it at the first
turn.
"""

from typing import Any

from webui.prompt import ToolDefinition

TOOL_NAME = "memory"
VERBS = ("recall", "remember", "ask")

MEMORY_TOOL = ToolDefinition(
    name=TOOL_NAME,
    description=(
        "Your long-term memory across conversations. Use verb 'recall' to look up what you know "
        "about something (the answer says whether it matched or fell back to recent memories); "
        "'remember' to keep a fact worth knowing later; 'ask' to hand a question to your memory "
        "that will be answered in a later turn."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "verb": {
                "type": "string",
                "enum": list(VERBS),
                "description": "recall, remember or ask.",
            },
            "text": {
                "type": "string",
                "description": "What to recall, the fact to remember, or the question to ask.",
            },
        },
        "required": ["verb", "text"],
        "additionalProperties": False,
    },
)


def input_problem(tool_input: Any) -> dict[str, Any] | None:
    """An error result telling the model what is allowed, or ``None`` when the input is valid."""
    allowed = 'Call memory with exactly {"verb": "recall" | "remember" | "ask", "text": "..."}.'
    if not isinstance(tool_input, dict):
        return {"error": "invalid_input", "message": f"The input must be an object. {allowed}"}
    extra = sorted(set(tool_input) - {"verb", "text"})
    if extra:
        return {"error": "invalid_input", "message": f"Unexpected fields {extra}. {allowed}"}
    if tool_input.get("verb") not in VERBS:
        return {
            "error": "invalid_input",
            "message": f"Unknown verb {tool_input.get('verb')!r}. {allowed}",
        }
    text = tool_input.get("text")
    if not isinstance(text, str) or not text.strip():
        return {
            "error": "invalid_input",
            "message": f"The text must be a non-empty string. {allowed}",
        }
    return None
