"""What a turn writes: the user's message before the vessel is called (so a failure never loses
it), and the reply with everything saved alongside it, in one transaction."""

from typing import Any

from django.db import transaction

from webui.extensions import TurnContext, turn_saving
from webui.ledger.recorder import save_ledger_row
from webui.models import Conversation, Message
from webui.text.canonical import without_nul
from webui.turns.rounds import consume_saved_rounds, recorded_rounds
from webui.turns.vessel_loop import TurnReply

TITLE_CHARS = 60


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


def save_reply(*, turn: TurnContext, reply: TurnReply) -> Message:
    """Save the reply as the answer to the turn's user message, drop its saved rounds, and let
    each extension write its own rows about the reply (``turn_saving``), in one transaction.
    Raises ``IntegrityError`` if the message has an answer already."""
    tool_uses, rounds = recorded_rounds(reply.rounds)
    with transaction.atomic():
        assistant_message = append_message(
            conversation=turn.conversation,
            role=Message.Role.ASSISTANT,
            content=without_nul(reply.text),
            tool_uses=tool_uses,
            rounds=rounds,
            usage=reply.usage,
            vessel=turn.conversation.vessel,
            reply_to=turn.user_message,
            stopped=reply.stopped and not reply.interrupted,
            interrupted=reply.interrupted,
        )
        consume_saved_rounds(turn.user_message)
        turn_saving(turn=turn, assistant_message=assistant_message)
        save_ledger_row(reply.call)
    return assistant_message
