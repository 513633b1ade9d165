"""The one turn service every vessel, page and API call goes through.

A turn takes the conversation's turn lock first (:mod:`webui.turns.lock`: one turn at a time, a
second one is refused with ``turn_in_progress`` and changes nothing), saves the user's message (so
a failure never loses it), settles the conversation's pins (at its first turn: the vault base, the
memory block and the tools), assembles the prompt from them, streams the vessel's reply, runs the
tool calls it asks for in bounded rounds (:mod:`webui.turns.vessel_loop`; each round saved as it
finishes, :mod:`webui.turns.rounds`), and saves the assistant's row (:mod:`webui.turns.saving`),
which answers that one user message, with its tool uses, rounds and usage. :func:`stream_turn`
tells all this as :mod:`webui.turns.events`; :func:`run_turn` and :func:`retry_turn` wait for its
end. Failures come back as :class:`TurnError` with a code, words a person can act on, and the saved
user message so the turn can be retried.
"""

import logging
from collections.abc import Generator, Iterator
from typing import Any

from django.db import IntegrityError

from webui.extensions import TurnContext, registered_extensions
from webui.models import Conversation, Message
from webui.turns.busy_database import DatabaseBusy, retry_while_locked
from webui.turns.events import (
    StopSignal,
    TurnDone,
    TurnError,
    TurnEvent,
    TurnFailed,
    TurnResult,
    TurnStarted,
)
from webui.turns.failures import (
    already_answered,
    conversation_deleted,
    database_busy,
    lost_turn,
    refused_save,
    reply_not_saved,
    turn_in_progress,
)
from webui.turns.heartbeat import LeaseHeartbeat
from webui.turns.lock import (
    ConversationGone,
    TurnBusy,
    TurnLock,
    TurnLost,
    claim_turn,
    lease_seconds,
    release_turn,
)
from webui.turns.reply_cap import TooManyReplies, too_many_replies
from webui.turns.saving import save_reply, save_user_message
from webui.turns.vessel_loop import TurnControl, TurnReply, reply_events

__all__ = ["StopSignal", "TurnError", "TurnResult", "retry_turn", "run_turn", "stream_turn"]

logger = logging.getLogger(__name__)


def outcome_of(events: Iterator[TurnEvent]) -> TurnResult:
    """The rows a turn's events ended with; its :class:`TurnError` raised if it failed."""
    last: TurnEvent | None = None
    for last in events:  # noqa: B007 - only the last event is the outcome
        pass
    if isinstance(last, TurnFailed):
        raise last.error
    assert isinstance(last, TurnDone), f"a turn ended with {last!r}"
    return last.result


def run_turn(*, conversation: Conversation, text: str) -> TurnResult:
    """Save ``text`` as the viewer's message and answer it."""
    return outcome_of(stream_turn(conversation=conversation, text=text, stop=None))


def retry_turn(*, conversation: Conversation, user_message: Message | None = None) -> TurnResult:
    """Answer ``user_message`` (by default the conversation's newest unanswered user message),
    continuing from the tool rounds an earlier attempt saved."""
    return outcome_of(stream_turn(conversation=conversation, user_message=user_message, stop=None))


def stream_turn(
    *,
    conversation: Conversation,
    text: str | None = None,
    user_message: Message | None = None,
    stop: StopSignal | None = None,
    streamed: bool = False,
) -> Iterator[TurnEvent]:
    """One turn as events: save ``text`` and answer it, or answer the saved ``user_message``, or
    (neither given) the newest unanswered user message. See :mod:`webui.turns.events` for the
    order; the last event is :class:`TurnDone` or :class:`TurnFailed`. With ``streamed`` the
    vessel is called in its streaming form and the text arrives in pieces; without, it is called
    as before and its text arrives as one piece. Both save exactly the same rows.

    A consumer that stops reading (closes the generator) does not stop the turn: it runs to its
    end and saves, before ``close()`` returns. Only ``stop`` (or :func:`webui.turns.lock.request_stop`)
    stops it, and a stopped turn is saved too.
    """
    events = locked_turn_events(
        conversation=conversation,
        text=text,
        user_message=user_message,
        stop=stop or StopSignal(),
        streamed=streamed,
    )
    for event in events:
        try:
            yield event
        except GeneratorExit:
            for _ in events:
                pass
            raise


def locked_turn_events(
    *,
    conversation: Conversation,
    text: str | None,
    user_message: Message | None,
    stop: StopSignal,
    streamed: bool,
) -> Iterator[TurnEvent]:
    """The turn inside the conversation's lock, its lease renewed by a heartbeat while it runs;
    the lock is free again before the last event."""
    resuming = None if text is not None else message_to_retry(conversation, user_message)
    try:
        lock = claim_turn(conversation, resuming=resuming, capped=True)
    except TooManyReplies as refusal:
        yield TurnFailed(too_many_replies(refusal))
        return
    except TurnBusy as busy:
        yield TurnFailed(turn_in_progress(busy.turn_id))
        return
    except ConversationGone:
        yield TurnFailed(conversation_deleted(conversation.pk))
        return
    except DatabaseBusy:
        yield TurnFailed(database_busy(None, budget=lease_seconds()))
        return
    try:
        with LeaseHeartbeat(lock):
            outcome = yield from saved_turn_events(
                conversation=conversation,
                text=text,
                user_message=user_message,
                control=TurnControl(lock=lock, stop=stop, streamed=streamed),
            )
    finally:
        try:
            release_turn(lock)
        except DatabaseBusy:
            logger.warning("Turn %s could not release its lock; it lapses", lock.turn_id)
    yield outcome


def message_to_retry(conversation: Conversation, user_message: Message | None) -> Any:
    """The id of the message a retry answers (``user_message``, or the newest unanswered one),
    read before the lock is claimed: a lapsed turn that answered it is continued, not kept."""
    if user_message is not None:
        return user_message.pk
    waiting = conversation.messages.filter(role=Message.Role.USER, reply__isnull=True)
    return waiting.order_by("-sequence").values_list("pk", flat=True).first()


def message_to_answer(
    *, conversation: Conversation, text: str | None, user_message: Message | None
) -> Message:
    """The saved user message this turn answers (``text`` saved now); a :class:`TurnError` when
    it cannot be answered. Called inside the lock, so "unanswered" stays true for the turn."""
    if text is not None:
        return save_user_message(conversation=conversation, text=text)
    if user_message is None:
        waiting = conversation.messages.filter(role=Message.Role.USER, reply__isnull=True)
        user_message = waiting.order_by("-sequence").first()
        if user_message is None:
            raise TurnError(
                code="nothing_to_retry",
                message="There is no unanswered message to retry in this conversation.",
                status=409,
            )
        return user_message
    if Message.objects.filter(reply_to=user_message).exists():
        raise already_answered(
            user_message, "That message has its answer already; there is nothing to retry."
        )
    return user_message


def saved_turn_events(
    *,
    conversation: Conversation,
    text: str | None,
    user_message: Message | None,
    control: TurnControl,
) -> Generator[TurnEvent, None, TurnDone | TurnFailed]:
    """Start, answer and save the turn; returns its last event for the caller to yield."""
    try:
        message = message_to_answer(conversation=conversation, text=text, user_message=user_message)
    except TurnError as error:
        return TurnFailed(error)
    yield TurnStarted(turn_id=control.lock.turn_id, user_message=message)
    turn = TurnContext(
        conversation=conversation,
        user_message=message,
        first_turn=conversation.offered_tools is None,
    )
    try:
        control.lock.answering(message)
        reply = yield from reply_events(turn=turn, control=control)
    except TurnError as error:
        return TurnFailed(error)
    except TurnLost:
        return TurnFailed(lost_turn(conversation.pk, message))
    except DatabaseBusy:
        return TurnFailed(database_busy(message, budget=control.lock.budget))
    return saved_reply(turn=turn, reply=reply, lock=control.lock)


def saved_reply(*, turn: TurnContext, reply: TurnReply, lock: TurnLock) -> TurnDone | TurnFailed:
    """Save ``reply`` while this turn holds the lock, tried again while the database is locked;
    each refusal named for its cause. The installed extensions hear of a saved reply."""
    message = turn.user_message
    try:
        lock.renew()  # only the lock's holder saves the reply
        assistant_message = retry_while_locked(
            lambda: save_reply(turn=turn, reply=reply), budget=lock.budget, what="A reply's save"
        )
    except TurnLost:
        return TurnFailed(lost_turn(lock.conversation_id, message))
    except DatabaseBusy:
        return TurnFailed(reply_not_saved(message, text=reply.text, budget=lock.budget))
    except IntegrityError:
        error = refused_save(lock, message)
        if error is None:
            raise
        return TurnFailed(error)
    for extension in registered_extensions():
        try:
            extension.turn_saved(turn=turn, assistant_message=assistant_message)
        except Exception:
            logger.exception("Extension %s failed after the turn was saved", extension.name)
    return TurnDone(TurnResult(user_message=message, assistant_message=assistant_message))
