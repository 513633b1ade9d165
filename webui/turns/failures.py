"""A turn's failures that are about the conversation's lock and the database, each named for its
real cause: another turn is running, the turn lost its lock, the conversation was deleted under
it, the message was answered already, or the database stayed busy past the turn's budget."""

from webui.models import Conversation, Message
from webui.turns.events import TurnError
from webui.turns.lock import TurnLock


def turn_in_progress(turn_id: str | None) -> TurnError:
    """A live turn holds the conversation: this one changed nothing."""
    return TurnError(
        code="turn_in_progress",
        message="A reply is still being written in this conversation: wait for it (or stop it), "
        "then send again.",
        status=409,
        details={"turn_id": turn_id},
    )


def conversation_deleted(conversation_id: object) -> TurnError:
    """The conversation (and with it the user message) was deleted while the turn ran."""
    return TurnError(
        code="conversation_deleted",
        message="This conversation was deleted while the reply was being written, so the reply "
        "was not saved. Start a new conversation.",
        status=410,
        details={"conversation": str(conversation_id)},
    )


def lost_turn(conversation_id: object, message: Message) -> TurnError:
    """The turn's lock is gone: its conversation was deleted, or its lease lapsed and another
    turn claimed the conversation. It saves nothing more."""
    if not Conversation.objects.filter(pk=conversation_id).exists():
        return conversation_deleted(conversation_id)
    return TurnError(
        code="turn_lost",
        message="This reply lost its hold on the conversation (its server was too slow to renew "
        "it) and another one started, so it was dropped. Wait for that one, then retry if your "
        "message still has no answer.",
        status=409,
        user_message=message,
    )


def refused_save(lock: TurnLock, message: Message) -> TurnError | None:
    """Why the database refused the reply's save (an ``IntegrityError``), by its real cause;
    ``None`` when it is none of the known ones (a bug, to be raised)."""
    if not Conversation.objects.filter(pk=lock.conversation_id).exists():
        return conversation_deleted(lock.conversation_id)
    if not lock.mine().exists():
        return lost_turn(lock.conversation_id, message)
    if Message.objects.filter(reply_to=message).exists():
        return already_answered(
            message,
            "Another reply to this message was saved first; this one was dropped.",
            user_message=message,
        )
    return None


def already_answered(
    message: Message, explanation: str, *, user_message: Message | None = None
) -> TurnError:
    """409 ``already_answered``: ``message`` has its reply saved already."""
    return TurnError(
        code="already_answered",
        message=explanation,
        status=409,
        details={"message": str(message.pk)},
        user_message=user_message,
    )


def database_busy(message: Message | None, *, budget: float) -> TurnError:
    """The database stayed locked past the turn's budget before the vessel was done (or, with no
    ``message``, before the turn could start: nothing was saved)."""
    then = "Your message is kept: press Retry." if message else "Nothing was saved: send again."
    return TurnError(
        code="database_busy",
        message=f"The database stayed busy for {budget:g} s, so the reply could not go on. {then}",
        status=503,
        user_message=message,
    )


def reply_not_saved(message: Message, *, text: str, budget: float) -> TurnError:
    """The vessel's reply was written but the database stayed locked past the turn's budget: the
    reply's text travels in ``details.reply_text`` so the page keeps showing it."""
    return TurnError(
        code="reply_not_saved",
        message=f"The reply was written but could not be saved: the database stayed busy for "
        f"{budget:g} s. Its text is still shown here; copy what you need, then press Retry.",
        status=503,
        details={"reply_text": text},
        user_message=message,
    )
