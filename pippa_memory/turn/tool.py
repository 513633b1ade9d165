"""The one memory tool: ``memory`` with verbs ``recall``, ``remember`` and ``ask``, one text, and
for ``remember`` an optional ``scope``.

One tool with several verbs is a smaller surface to keep consistent across seven adapters than one
tool per verb. Its definition never changes within a conversation: the host stores it at the first
turn, so a conversation begun before ``scope`` existed keeps a definition without it, and a
``remember`` with no ``scope`` stays valid everywhere (it gets the member's own default).
"""

from typing import Any

from pippa_memory.models import Scope
from webui.prompt_types import ToolDefinition

TOOL_NAME = "memory"
VERBS = ("recall", "remember", "ask")
SCOPES = tuple(Scope.values)
#: The longest recall or ask text passed on to the engine: a question, not a document.
MAX_QUERY_CHARS = 2000

MEMORY_TOOL = ToolDefinition(
    name=TOOL_NAME,
    description=(
        "Your long-term memory across conversations. Use verb 'recall' to look up what you know "
        "about something (the answer says whether it matched or fell back to recent memories, "
        "and who said each thing); 'remember' to keep a fact worth knowing later; 'ask' to hand "
        "a question to your memory that will be answered in a later turn. What you remember is "
        "private to the member you are talking with unless you give scope 'household': use it "
        "for facts about the home that everyone shares (where the spare key is, when the bins go "
        "out), never for something personal. Leave scope out to use the member's own setting."
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
            "scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": (
                    "Only with remember: 'private' (only this member will see it) or "
                    "'household' (everyone in the home will). Leave out for the member's default."
                ),
            },
        },
        "required": ["verb", "text"],
        "additionalProperties": False,
    },
)


def input_problem(tool_input: Any) -> dict[str, Any] | None:
    """An error result telling the model what is allowed, or ``None`` when the input is valid."""
    allowed = (
        'Call memory with exactly {"verb": "recall" | "remember" | "ask", "text": "..."}, '
        'and with remember optionally "scope": "private" | "household".'
    )
    if not isinstance(tool_input, dict):
        return invalid(f"The input must be an object. {allowed}")
    extra = sorted(set(tool_input) - {"verb", "text", "scope"})
    if extra:
        return invalid(f"Unexpected fields {extra}. {allowed}")
    verb = tool_input.get("verb")
    if verb not in VERBS:
        return invalid(f"Unknown verb {verb!r}. {allowed}")
    text = tool_input.get("text")
    if not isinstance(text, str) or not text.strip():
        return invalid(f"The text must be a non-empty string. {allowed}")
    if "\x00" in text:
        return invalid("The text may not hold a NUL character; send it without one.")
    if verb != "remember" and len(text) > MAX_QUERY_CHARS:
        return invalid(
            f"A {verb} text may be at most {MAX_QUERY_CHARS} characters (this one has "
            f"{len(text)}); send a shorter one."
        )
    if tool_input.get("scope") is not None:  # a null scope is a scope left out
        if verb != "remember":
            return invalid(f"Only remember takes a scope, not {verb}. {allowed}")
        if tool_input["scope"] not in SCOPES:
            return invalid(f"Unknown scope {tool_input['scope']!r}. {allowed}")
    return None


def invalid(message: str) -> dict[str, Any]:
    return {"error": "invalid_input", "message": message}
