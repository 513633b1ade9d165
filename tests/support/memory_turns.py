"""Whole turns with memory on, for the plug-in's tests: a chat's first turn, and everything the
vessel is handed at the next one."""

import json
from typing import Any

from reference_engine.server import ReferenceEngine
from webui.models import Conversation
from webui.turns.service import run_turn


def started(conversation: Conversation) -> Conversation:
    """``conversation`` after a first turn: pinned to the head, its block stored."""
    run_turn(conversation=conversation, text="hello")
    conversation.refresh_from_db()
    return conversation


def next_prompt(conversation: Conversation, sent: list[dict[str, Any]], text: str) -> str:
    """Everything the vessel was handed at the next turn (as the next request loads it)."""
    before = len(sent)
    result = run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text=text)
    handed = json.dumps(sent[before:]) + json.dumps(result.assistant_message.tool_uses)
    return handed + result.assistant_message.content


def first_turn_while_down(engine: ReferenceEngine, conversation: Conversation) -> None:
    """The first turn of ``conversation`` while the engine is down (it pins no memory), then the
    engine back up."""
    engine.set_fault("down")
    run_turn(conversation=conversation, text="hello")
    engine.reset()
