"""Long conversations for the tests that need one: run turn by turn, or written straight to the
database."""

from typing import Any

from webui.models import Conversation, Message, Soul, Vessel
from webui.turns.service import run_turn


def long_conversation(conversation: Conversation) -> list[Message]:
    """120 turns, every third with a tool round, a row written without its rounds (as the admin
    writes one), and a stopped reply; the user messages in order."""
    for index in range(120):
        text = f"remember fact {index}" if index % 3 == 0 else f"turn {index}: how is the garden?"
        run_turn(conversation=conversation, text=text)
    Message.objects.create(conversation=conversation, role="user", content="by hand")
    Message.objects.create(
        conversation=conversation,
        role="assistant",
        content="written by hand",
        tool_uses=[{"id": "h1", "name": "memory", "input": {"verb": "recall"}, "output": [1]}],
    )
    Message.objects.create(conversation=conversation, role="user", content="stop that")
    Message.objects.create(
        conversation=conversation, role="assistant", content="I was say", stopped=True
    )
    Message.objects.create(conversation=conversation, role="user", content="last")
    return list(conversation.messages.filter(role="user").order_by("sequence"))


def garden_chat(member: Any, soul: Soul, vessel: Vessel, *, turns: int, title: str) -> Conversation:
    """A member's chat of ``turns`` questions about the garden, each with its three-line answer,
    written straight to the database (no vessel is called)."""
    conversation = Conversation.objects.create(soul=soul, vessel=vessel, viewer=member, title=title)
    for turn in range(turns):
        asked = Message.objects.create(
            conversation=conversation, role="user", content=f"Question {turn} about the garden?"
        )
        Message.objects.create(
            conversation=conversation,
            role="assistant",
            content=f"Answer {turn}: water the tomatoes.\n" * 3,
            reply_to=asked,
        )
    return conversation
