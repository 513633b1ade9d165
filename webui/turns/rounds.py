"""Tool rounds between the vessel and the assistant row: saved as each finishes (a
:class:`~webui.models.TurnRound` per round), replayed on a retry, and recorded on the reply.

A round saved here has the exact values the assistant row will hold (inputs and outputs settled
by :func:`webui.text.canonical.json_roundtrip`), so a retried turn sends the vessel the bytes the
failed one would have sent next, and its reply carries the rounds a turn without the failure would
have carried.
"""

from typing import Any

from webui.models import Message, TurnRound
from webui.prompt_types import ToolRound, ToolUse
from webui.text.canonical import without_nul


def save_tool_round(
    *, user_message: Message, index: int, tool_round: ToolRound, usage: dict[str, int]
) -> None:
    """Save round ``index`` of the turn answering ``user_message``, with the usage of the vessel
    call that asked for it. A second save of the same round raises ``IntegrityError``."""
    TurnRound.objects.create(
        user_message=user_message,
        index=index,
        text=without_nul(tool_round.text),
        tool_uses=[use.as_dict() for use in tool_round.tool_uses],
        usage=usage,
    )


def saved_tool_rounds(user_message: Message) -> list[tuple[ToolRound, dict[str, int]]]:
    """The rounds an earlier, failed turn kept for ``user_message``, in order, each with its
    usage; empty when there are none."""
    rows = TurnRound.objects.filter(user_message=user_message).order_by("index")
    return [
        (
            ToolRound(
                text=row.text,
                tool_uses=tuple(ToolUse.from_dict(use) for use in row.tool_uses),
            ),
            row.usage,
        )
        for row in rows
    ]


def consume_saved_rounds(user_message: Message) -> None:
    """Delete the kept rounds of ``user_message``: its reply now carries them. Call it in the
    reply's transaction."""
    TurnRound.objects.filter(user_message=user_message).delete()


def recorded_rounds(rounds: list[ToolRound]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``Message.tool_uses`` and ``Message.rounds`` for a reply that took ``rounds``."""
    tool_uses = [use.as_dict() for tool_round in rounds for use in tool_round.tool_uses]
    recorded = [
        {"text": without_nul(r.text), "tool_use_ids": [use.id for use in r.tool_uses]}
        for r in rounds
    ]
    return tool_uses, recorded
