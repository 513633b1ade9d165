"""What rode a reply, as notes the chat page shows under it to the conversation's member.

Two kinds, both read from the plug-in's own records and the reply's stored tool uses, never
written into the conversation: the background answers whose per-turn slot carried them
(:func:`pippa_memory.turn.answers.record_delivery` kept each with its reply), and the remembers a
recall found still on their way to memory (:mod:`pippa_memory.turn.on_its_way`).
"""

from collections.abc import Sequence
from typing import Any

from pippa_memory.models import PendingAsk
from pippa_memory.turn.tool import TOOL_NAME
from webui.extensions import MessageNote
from webui.models import Conversation, Message

BACKGROUND_ANSWER = "background_answer"
ON_ITS_WAY = "on_its_way"


def background_answer_notes(
    conversation: Conversation, replies: Sequence[Message]
) -> dict[str, list[MessageNote]]:
    """The background answers each of ``replies`` carried in its per-turn slot. One query."""
    notes: dict[str, list[MessageNote]] = {}
    rode = PendingAsk.objects.filter(
        conversation=conversation, delivered_with__in=[reply.pk for reply in replies]
    ).order_by("created_at", "pk")
    for ask in rode.only("question", "answer", "delivered_with_id"):
        text = f"Background answer to “{' '.join(ask.question.split())}”: {ask.answer}"
        notes.setdefault(str(ask.delivered_with_id), []).append(
            MessageNote(kind=BACKGROUND_ANSWER, text=text)
        )
    return notes


def on_its_way_notes(replies: Sequence[Message]) -> dict[str, list[MessageNote]]:
    """For each recall in ``replies`` that found remembers still on their way to memory, a note
    naming them: the reply's reader sees it whatever the model made of it. No query."""
    notes: dict[str, list[MessageNote]] = {}
    for reply in replies:
        for use in reply.tool_uses or []:
            for text in pending_texts(use):
                notes.setdefault(str(reply.pk), []).append(
                    MessageNote(
                        kind=ON_ITS_WAY,
                        text=f"On its way to memory when this was recalled: “{text}”",
                    )
                )
    return notes


def pending_texts(use: dict[str, Any]) -> list[str]:
    """The texts a stored memory tool use's result named as on their way (``output.pending``)."""
    output = use.get("output")
    if use.get("name") != TOOL_NAME or not isinstance(output, dict):
        return []
    pending = output.get("pending")
    if not isinstance(pending, list):
        return []
    return [p["text"] for p in pending if isinstance(p, dict) and isinstance(p.get("text"), str)]


def turn_notes(
    conversation: Conversation, messages: Sequence[Message]
) -> dict[str, list[MessageNote]]:
    """Every note under the assistant rows among ``messages``, by message id."""
    replies = [m for m in messages if m.role == Message.Role.ASSISTANT]
    if not replies:
        return {}
    notes = background_answer_notes(conversation, replies)
    for message_id, extra in on_its_way_notes(replies).items():
        notes.setdefault(message_id, []).extend(extra)
    return notes
