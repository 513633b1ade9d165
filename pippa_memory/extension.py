"""The plug-in's side of the host's extension points."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pippa_memory import unattended
from pippa_memory.conf import memory_applies, memory_settings, why_memory_does_not_apply
from pippa_memory.health import memory_health_lines
from pippa_memory.pins.turn_block import pinned_block, settle_turn_pin
from pippa_memory.retention import memory_prune_targets
from pippa_memory.turn import answers, verbs
from pippa_memory.turn.notes import turn_notes
from pippa_memory.turn.state import MemoryTurn, remaining
from pippa_memory.turn.tool import MEMORY_TOOL, TOOL_NAME, input_problem
from webui.extensions import HealthLine, MessageNote, TurnContext, TurnExtension
from webui.models import Conversation, Message, UnattendedRun
from webui.prompt_types import ToolCall, ToolDefinition
from webui.retention import PruneTarget

#: Conversations with no human in them: they carry a bundle or a brief, attached (and pinned) by
#: ``prepare_unattended`` before their turn, in the memory block's place.
UNATTENDED_KINDS = (Conversation.Kind.JOB, Conversation.Kind.WAKE)

#: What a tool call gets when memory takes no part in the conversation, by the reason.
LEFT_OUT_MESSAGES = {
    "memory_disabled": "Memory is switched off for this household; carry on without it.",
    "temporary": "Nothing is remembered in a temporary chat; carry on without memory.",
}


class MemoryExtension(TurnExtension):
    """Fills the host's extension points with the memory seams and the memory tool."""

    name = "pippa_memory"
    offers_memory_tool = True
    memory_tool_name = TOOL_NAME

    def settle(self, *, turn: TurnContext) -> str | None:
        conversation = turn.conversation
        if conversation.kind in UNATTENDED_KINDS:
            return None  # pinned with its bundle or brief before the turn
        return settle_turn_pin(conversation, budget=remaining(turn), later_turn=not turn.first_turn)

    def memory_block(self, *, turn: TurnContext) -> str | None:
        conversation = turn.conversation
        if conversation.kind in UNATTENDED_KINDS:
            return unattended.unattended_block(conversation)
        return pinned_block(conversation)

    def turn_slot_parts(self, *, turn: TurnContext) -> list[str]:
        conversation = turn.conversation
        if not memory_applies(conversation):
            return []
        fetched = answers.fetch_ready_answers(conversation, budget=remaining(turn))
        if not fetched:
            return []
        state = turn.state(MemoryTurn)
        state.delivered_answers, state.ridden_answers = answers.split_ridden(conversation, fetched)
        return [answers.slot_text(state.delivered_answers)] if state.delivered_answers else []

    def tools(self, *, turn: TurnContext) -> list[ToolDefinition]:
        conversation = turn.conversation
        if not memory_applies(conversation) or not conversation.vessel.memory_tool_enabled:
            return []
        return [MEMORY_TOOL]

    def execute_tool(self, *, turn: TurnContext, call: ToolCall) -> tuple[bool, Any]:
        if call.name != TOOL_NAME:
            return False, None
        problem = input_problem(call.input)
        if problem:
            return True, problem
        left_out = why_memory_does_not_apply(turn.conversation)
        if left_out:
            return True, verbs.memory_unavailable(left_out, LEFT_OUT_MESSAGES[left_out])
        verb, text = call.input["verb"], call.input["text"].strip()
        if verb == "remember":
            scope = call.input.get("scope")
            return True, verbs.remember(conversation=turn.conversation, text=text, scope=scope)
        budget = memory_settings.TOOL_BUDGET
        if verb == "recall":
            return True, verbs.recall(conversation=turn.conversation, text=text, budget=budget)
        return True, verbs.ask(conversation=turn.conversation, text=text, budget=budget)

    def turn_saving(self, *, turn: TurnContext, assistant_message: Message) -> None:
        delivered = turn.state(MemoryTurn).delivered_answers
        if delivered:
            answers.record_delivery(turn.conversation, delivered, reply=assistant_message)

    def turn_saved(self, *, turn: TurnContext, assistant_message: Message) -> None:
        state = turn.state(MemoryTurn)
        to_acknowledge = state.delivered_answers + state.ridden_answers
        if to_acknowledge:
            answers.acknowledge(turn.conversation, to_acknowledge)

    def message_notes(
        self, *, conversation: Conversation, messages: Sequence[Message]
    ) -> dict[str, list[MessageNote]]:
        return turn_notes(conversation, messages)

    def prepare_unattended(
        self, *, conversation: Conversation, run: UnattendedRun
    ) -> dict[str, Any]:
        return unattended.prepare_unattended(conversation, run)

    def memory_status(self) -> str | None:
        if not memory_settings.ENABLED:
            return "Memory is switched off for this household (PIPPA_MEMORY_ENABLED=false)."
        return None

    def health_lines(self) -> list[HealthLine]:
        return memory_health_lines()

    def prune_targets(self, *, now: datetime) -> list[PruneTarget]:
        return memory_prune_targets(now=now)
