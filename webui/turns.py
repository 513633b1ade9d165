"""The one turn service every vessel, page and API call goes through.

A turn saves the user's message first (so a failure never loses it), settles the conversation's
pins (at its first turn: the vault base, the memory block and the tools), assembles the prompt from
them, calls the vessel, runs the tool calls it asks for in bounded rounds, and saves the assistant's row with
its tool uses, rounds and usage. Failures come back as :class:`TurnError` with a code, words a
person can act on, and the saved user message so the turn can be retried.
"""

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction

from webui.assembly import assemble_prompt
from webui.canonical import json_roundtrip, without_nul
from webui.conf import webui_settings
from webui.extensions import TurnContext, registered_extensions
from webui.models import Conversation, Message
from webui.pins import settle_pins
from webui.prompt import Prompt, ToolCall, ToolDefinition, ToolRound, ToolUse
from webui.vault import VaultError
from webui.vessels.base import VesselAdapter, normalised_usage
from webui.vessels.errors import VesselError
from webui.vessels.registry import adapter_for

logger = logging.getLogger(__name__)

TITLE_CHARS = 60


@dataclass
class TurnError(Exception):
    """A turn could not be answered. The user's message, if any, is saved and can be retried."""

    code: str
    message: str
    status: int = 502
    details: dict[str, Any] = field(default_factory=dict)
    user_message: Message | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class TurnResult:
    """The two rows a successful turn leaves behind."""

    user_message: Message
    assistant_message: Message


def append_message(*, conversation: Conversation, **fields: Any) -> Message:
    """Save a message as the next one of ``conversation``, serialising writers on the row."""
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        return Message.objects.create(conversation=conversation, **fields)


def save_user_message(*, conversation: Conversation, text: str) -> Message:
    """Store what the household member said; a blank title becomes the start of the first message."""
    message = append_message(conversation=conversation, role=Message.Role.USER, content=text)
    if not conversation.title:
        first_line = " ".join(text.split())
        title = (
            first_line if len(first_line) <= TITLE_CHARS else first_line[: TITLE_CHARS - 1] + "…"
        )
        Conversation.objects.filter(pk=conversation.pk, title="").update(title=title)
        conversation.title = title
    return message


def run_turn(*, conversation: Conversation, text: str) -> TurnResult:
    """Save ``text`` as the viewer's message and answer it."""
    user_message = save_user_message(conversation=conversation, text=text)
    return answer_user_message(conversation=conversation, user_message=user_message)


def retry_turn(*, conversation: Conversation) -> TurnResult:
    """Answer the conversation's last message again, if it is a user message still waiting."""
    last = conversation.messages.order_by("-sequence").first()
    if last is None or last.role != Message.Role.USER:
        raise TurnError(
            code="nothing_to_retry",
            message="There is no unanswered message to retry in this conversation.",
            status=409,
        )
    return answer_user_message(conversation=conversation, user_message=last)


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


def run_vessel(
    *, adapter: VesselAdapter, prompt: Prompt, tools: list[ToolDefinition], turn: TurnContext
) -> tuple[str, list[ToolRound], dict[str, int]]:
    """Call the vessel until it answers without tool calls, or the round limit is reached."""
    max_rounds = webui_settings.MAX_TOOL_ROUNDS
    rounds: list[ToolRound] = []
    used_ids: set[str] = set()
    usage = normalised_usage()
    while True:
        reply = adapter.complete(prompt=prompt, tools=tools)
        for key, value in reply.usage.items():
            usage[key] += value
        if not reply.tool_calls:
            return reply.text, rounds, usage
        if len(rounds) >= max_rounds:
            note = f"(I stopped after {max_rounds} rounds of tool calls without a final answer.)"
            return "\n\n".join(part for part in (reply.text, note) if part), rounds, usage
        calls = unique_calls(reply.tool_calls, used_ids)
        tool_round = ToolRound(
            text=reply.text, tool_uses=tuple(execute_tool(turn, call) for call in calls)
        )
        rounds.append(tool_round)
        prompt = prompt.with_round(tool_round)


def answer_user_message(*, conversation: Conversation, user_message: Message) -> TurnResult:
    """Answer a saved user message: settle the pins, assemble, call the vessel, run tools, save
    the reply."""
    turn = TurnContext(
        conversation=conversation,
        user_message=user_message,
        first_turn=conversation.offered_tools is None,
    )
    try:
        adapter = adapter_for(conversation.vessel)
        settle_pins(turn)
        tools = [ToolDefinition.from_dict(tool) for tool in conversation.offered_tools]
        prompt = assemble_prompt(turn)
        text, rounds, usage = run_vessel(adapter=adapter, prompt=prompt, tools=tools, turn=turn)
    except VaultError as exc:
        raise TurnError(
            code="vault_unavailable",
            message=f"{conversation.soul.name}'s vault cannot be read: {exc} Ask an admin to fix it.",
            status=503,
            user_message=user_message,
        ) from exc
    except VesselError as exc:
        logger.warning("Vessel %s failed (%s): %s", conversation.vessel.slug, exc.code, exc.message)
        raise TurnError(
            code=exc.code,
            message=f"{conversation.vessel.name} could not answer: {exc.message}",
            status=502,
            details={"vessel": conversation.vessel.slug, **exc.details},
            user_message=user_message,
        ) from exc
    tool_uses = [use.as_dict() for tool_round in rounds for use in tool_round.tool_uses]
    recorded_rounds = [
        {"text": without_nul(r.text), "tool_use_ids": [use.id for use in r.tool_uses]}
        for r in rounds
    ]
    assistant_message = append_message(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=without_nul(text),
        tool_uses=tool_uses,
        rounds=recorded_rounds,
        usage=usage,
        vessel=conversation.vessel,
    )
    for extension in registered_extensions():
        try:
            extension.turn_saved(turn=turn, assistant_message=assistant_message)
        except Exception:
            logger.exception("Extension %s failed after the turn was saved", extension.name)
    return TurnResult(user_message=user_message, assistant_message=assistant_message)
