"""What a turn whose process died leaves behind: kept as a reply marked interrupted.

A turn's heartbeat writes the text of its vessel call so far on the conversation row
(``turn_partial_text``, beside ``turn_message_id``, the user message it answers), and each tool
round is saved as it finishes (:mod:`webui.turns.rounds`). When the next turn claims a lock whose
lease lapsed (:func:`webui.turns.lock.claim_turn`), :func:`keep_interrupted_reply` saves these as
the answer to that message, marked ``interrupted``, in the claim's transaction. A turn that had
nothing yet (no text, no round) leaves its message unanswered, so Retry answers it.
"""

import uuid

from webui.models import Conversation, Message
from webui.models.messages import empty_usage
from webui.prompt_types import ToolRound
from webui.text.canonical import without_nul
from webui.turns.rounds import consume_saved_rounds, recorded_rounds, saved_tool_rounds


def keep_interrupted_reply(
    *, conversation: Conversation, message_id: uuid.UUID | None, text: str
) -> Message | None:
    """Save what the lapsed turn answering ``message_id`` had (``text`` and its saved rounds) as
    that message's reply, marked interrupted; ``None`` when there was nothing to keep or the
    message is gone or answered already. Call it in the transaction that claims the lock."""
    if message_id is None:
        return None
    question = Message.objects.filter(
        pk=message_id, conversation_id=conversation.pk, role=Message.Role.USER
    ).first()
    if question is None or Message.objects.filter(reply_to=question).exists():
        return None
    saved = saved_tool_rounds(question)
    if not saved and not text.strip():
        return None
    rounds: list[ToolRound] = [tool_round for tool_round, _usage in saved]
    usage: dict[str, int] = empty_usage()
    for _round, round_usage in saved:
        for key, value in round_usage.items():
            usage[key] = usage.get(key, 0) + int(value)
    tool_uses, recorded = recorded_rounds(rounds)
    reply = Message.objects.create(
        conversation_id=conversation.pk,
        role=Message.Role.ASSISTANT,
        content=without_nul(text),
        tool_uses=tool_uses,
        rounds=recorded,
        vessel_id=conversation.vessel_id,
        reply_to=question,
        interrupted=True,
        usage=usage,
    )
    consume_saved_rounds(question)
    return reply
