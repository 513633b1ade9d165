"""The assembled prompt, as every vessel adapter receives it.

The order is fixed (DESIGN.md section 3): system sections (vault base, memory block, viewer
disclosure), then the persisted history, then the newest user message, then the per-turn slot. The
slot changes every turn and is never persisted; everything before it is rebuilt byte for byte from
stored rows on every later turn.
"""

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Literal


@dataclass(frozen=True)
class ToolDefinition:
    """A tool offered to the vessel; adapters render it in their provider's own format."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ToolDefinition":
        return cls(
            name=data["name"], description=data["description"], input_schema=data["input_schema"]
        )


@dataclass(frozen=True)
class ToolCall:
    """A tool call the vessel made: its id (the provider's, or a derived one), name and input.

    ``meta`` keeps what the provider needs to see again when the call is replayed (Gemini's
    ``thoughtSignature``, say); it is empty for most providers.
    """

    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolUse:
    """A tool call together with the output it got, as persisted on the assistant row."""

    id: str
    name: str
    input: dict[str, Any]
    output: Any
    meta: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "name": self.name, "input": self.input, "output": self.output}
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> "ToolUse":
        """A stored tool use (``Message.tool_uses`` shape, :meth:`as_dict`) as a prompt holds it."""
        return cls(
            id=record["id"],
            name=record["name"],
            input=record.get("input", {}),
            output=record.get("output"),
            meta=record.get("meta") or {},
        )


@dataclass(frozen=True)
class ToolRound:
    """One vessel call that asked for tools: the text it said beside them and the calls with results."""

    text: str
    tool_uses: tuple[ToolUse, ...]


@dataclass(frozen=True)
class HistoryMessage:
    """A persisted turn. Assistant turns carry their tool rounds before their final text."""

    id: str
    role: Literal["user", "assistant"]
    text: str
    rounds: tuple[ToolRound, ...] = ()
    #: This message as each adapter class rendered it, kept with the message so a history kept
    #: per process is rendered and encoded once (:meth:`VesselAdapter.render_history`). Not a
    #: field of the message: not compared, not copied by ``replace``.
    renderings: dict[type, tuple[Any, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )


@dataclass(frozen=True)
class Prompt:
    """Everything a vessel is sent for one call of a turn."""

    conversation_id: str
    system_sections: tuple[str, ...]
    history: tuple[HistoryMessage, ...]
    user_text: str
    turn_slot: tuple[str, ...] = ()
    # Tool rounds already taken in this turn; round n+1 extends round n.
    current_rounds: tuple[ToolRound, ...] = field(default_factory=tuple)
    # Id of the newest user message, for adapters that derive tool-call ids from it.
    user_message_id: str = ""

    @property
    def system_text(self) -> str:
        """The system prompt: the sections joined by blank lines, empty sections left out."""
        return "\n\n".join(section for section in self.system_sections if section)

    def front_sections(self) -> dict[str, str]:
        """The system text's sections by name, for a prompt assembled in the fixed order
        (:func:`webui.prompt.assembly.assemble_prompt`): ``vault`` first, ``disclosure`` last, and
        ``memory`` the extensions' blocks between them as the system text joins them ("" when
        there are none)."""
        sections = self.system_sections
        middle = sections[1:-1] if len(sections) > 1 else ()
        return {
            "vault": sections[0] if sections else "",
            "memory": "\n\n".join(block for block in middle if block),
            "disclosure": sections[-1] if len(sections) > 1 else "",
        }

    def with_round(self, tool_round: ToolRound) -> "Prompt":
        """The same prompt with one more tool round of the current turn."""
        return replace(self, current_rounds=(*self.current_rounds, tool_round))


def derived_call_id(prompt: Prompt, index: int) -> str:
    """A stable id for a tool call whose provider gave none (Ollama, older Gemini models).

    Made from the newest user message id, the round and the call's index, so the same call gets
    the same id when the turn is replayed later.
    """
    seed = f"{prompt.user_message_id}:{len(prompt.current_rounds)}:{index}"
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:24]
