"""The one turn service every vessel, page and API call goes through.

A turn takes the conversation's turn lock first (:mod:`webui.turns.lock`: one turn at a time, a
second one is refused with ``turn_in_progress`` and changes nothing), saves the user's message (so
a failure never loses it), settles the conversation's pins (at its first turn: the vault base, the
memory block and the tools), assembles the prompt from them, streams the vessel's reply, runs the
tool calls it asks for in bounded rounds (each round kept as it finishes, :mod:`webui.turns.rounds`), and
saves the assistant's row, which answers that one user message, with its tool uses, rounds and
usage. :func:`stream_turn` tells all this as :mod:`webui.turns.events`; :func:`run_turn` and
:func:`retry_turn` wait for its end. Failures come back as :class:`TurnError` with a code, words a
person can act on, and the saved user message so the turn can be retried.
"""

import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from webui.conf import webui_settings
from webui.extensions import TurnContext, registered_extensions, turn_saving
from webui.ledger.recorder import TurnLedger, keep
from webui.models import Conversation, Message, VesselCall
from webui.prompt.assembly import assemble_prompt
from webui.prompt.pins import settle_pins
from webui.prompt.types import Prompt, ToolDefinition, ToolRound
from webui.prompt.vault import VaultError
from webui.text.canonical import without_nul
from webui.text.lone_surrogates import replace_lone_surrogates
from webui.turns.events import (
    Delta,
    StopSignal,
    TurnDone,
    TurnError,
    TurnEvent,
    TurnFailed,
    TurnResult,
    TurnStarted,
)
from webui.turns.lock import TurnBusy, TurnLock, TurnLost, claim_turn, release_turn
from webui.turns.rounds import (
    consume_saved_rounds,
    recorded_rounds,
    save_tool_round,
    saved_tool_rounds,
)
from webui.turns.tool_calls import run_tool_round
from webui.vessels.base import VesselAdapter, VesselReply, normalised_usage
from webui.vessels.errors import VesselError
from webui.vessels.registry import adapter_for
from webui.vessels.streaming import ReplyDone, StreamEvent, TextDelta

__all__ = ["StopSignal", "TurnError", "TurnResult", "retry_turn", "run_turn", "stream_turn"]

logger = logging.getLogger(__name__)

TITLE_CHARS = 60


@dataclass(frozen=True)
class Answer:
    """What the vessel's rounds came to: the final (or, stopped, partial) text and the rounds."""

    text: str
    rounds: list[ToolRound]
    usage: dict[str, int]
    stopped: bool = False
    #: The cache ledger's row for the last vessel call, saved with the reply.
    call: VesselCall | None = None


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
    continuing from the tool rounds an earlier attempt kept."""
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
    """The turn inside the conversation's lock; the lock is free again before the last event."""
    try:
        lock = claim_turn(conversation)
    except TurnBusy as busy:
        yield TurnFailed(
            TurnError(
                code="turn_in_progress",
                message="A reply is still being written in this conversation: wait for it (or "
                "stop it), then send again.",
                status=409,
                details={"turn_id": busy.turn_id},
            )
        )
        return
    try:
        outcome = yield from answered_events(
            conversation=conversation,
            text=text,
            user_message=user_message,
            lock=lock,
            stop=stop,
            streamed=streamed,
        )
    finally:
        release_turn(lock)
    yield outcome


def lost_turn_error(message: Message) -> TurnError:
    """The turn ran past its lease and another claimed the conversation: it saves nothing more."""
    return TurnError(
        code="turn_lost",
        message="This reply took too long and another one started in this conversation, so it "
        "was dropped. Wait for that one, then retry if your message still has no answer.",
        status=409,
        user_message=message,
    )


def message_to_answer(
    *, conversation: Conversation, text: str | None, user_message: Message | None
) -> Message:
    """The saved user message this turn answers (``text`` saved now); a :class:`TurnError` when
    it cannot be answered. Called inside the lock, so "unanswered" stays true for the turn."""
    if text is not None:
        return save_user_message(conversation=conversation, text=text)
    if user_message is None:
        waiting = conversation.messages.filter(role=Message.Role.USER, answer__isnull=True)
        user_message = waiting.order_by("-sequence").first()
        if user_message is None:
            raise TurnError(
                code="nothing_to_retry",
                message="There is no unanswered message to retry in this conversation.",
                status=409,
            )
        return user_message
    if Message.objects.filter(answers=user_message).exists():
        raise TurnError(
            code="already_answered",
            message="That message has its answer already; there is nothing to retry.",
            status=409,
            details={"message": str(user_message.pk)},
        )
    return user_message


def answered_events(
    *,
    conversation: Conversation,
    text: str | None,
    user_message: Message | None,
    lock: TurnLock,
    stop: StopSignal,
    streamed: bool,
) -> Generator[TurnEvent, None, TurnDone | TurnFailed]:
    """Start, answer and save the turn; returns its last event for the caller to yield."""
    try:
        message = message_to_answer(conversation=conversation, text=text, user_message=user_message)
    except TurnError as error:
        return TurnFailed(error)
    yield TurnStarted(turn_id=lock.turn_id, user_message=message)
    turn = TurnContext(
        conversation=conversation,
        user_message=message,
        first_turn=conversation.offered_tools is None,
    )
    try:
        answer = yield from answer_events(turn=turn, lock=lock, stop=stop, streamed=streamed)
        lock.renew()  # only the lock's holder saves the answer
    except TurnError as error:
        return TurnFailed(error)
    except TurnLost:
        return TurnFailed(lost_turn_error(message))
    try:
        assistant_message = save_answer(turn=turn, answer=answer)
    except IntegrityError:
        return TurnFailed(
            TurnError(
                code="already_answered",
                message="Another reply to this message was saved first; this one was dropped.",
                status=409,
                details={"message": str(message.pk)},
                user_message=message,
            )
        )
    for extension in registered_extensions():
        try:
            extension.turn_saved(turn=turn, assistant_message=assistant_message)
        except Exception:
            logger.exception("Extension %s failed after the turn was saved", extension.name)
    return TurnDone(TurnResult(user_message=message, assistant_message=assistant_message))


def answer_events(
    *, turn: TurnContext, lock: TurnLock, stop: StopSignal, streamed: bool
) -> Generator[TurnEvent, None, Answer]:
    """Settle the pins, assemble, and stream the vessel's rounds; vault and vessel failures
    become a :class:`TurnError` that keeps the user message."""
    conversation = turn.conversation
    try:
        adapter = adapter_for(conversation.vessel)
        causes = settle_pins(turn)
        tools = [ToolDefinition.from_dict(tool) for tool in conversation.offered_tools]
        prompt = assemble_prompt(turn)
        ledger = TurnLedger(
            conversation=conversation,
            user_message=turn.user_message,
            adapter=adapter,
            causes=causes,
        )
        return (
            yield from vessel_rounds(
                adapter=adapter,
                prompt=prompt,
                tools=tools,
                turn=turn,
                ledger=ledger,
                lock=lock,
                stop=stop,
                streamed=streamed,
            )
        )
    except VaultError as exc:
        error = TurnError(
            code="vault_unavailable",
            message=f"{conversation.soul.name}'s vault cannot be read: {exc} Ask an admin to fix it.",
            status=503,
            user_message=turn.user_message,
        )
        raise error from exc
    except VesselError as exc:
        logger.warning("Vessel %s failed (%s): %s", conversation.vessel.slug, exc.code, exc.message)
        error = TurnError(
            code=exc.code,
            message=f"{conversation.vessel.name} could not answer: {exc.message}",
            status=502,
            details={"vessel": conversation.vessel.slug, **exc.details},
            user_message=turn.user_message,
        )
        raise error from exc


def save_answer(*, turn: TurnContext, answer: Answer) -> Message:
    """Save the reply as the answer to the turn's user message, drop its kept rounds, and let
    each extension write its own rows about the reply (``turn_saving``), in one transaction.
    Raises ``IntegrityError`` if the message has an answer already."""
    tool_uses, rounds = recorded_rounds(answer.rounds)
    with transaction.atomic():
        assistant_message = append_message(
            conversation=turn.conversation,
            role=Message.Role.ASSISTANT,
            content=without_nul(answer.text),
            tool_uses=tool_uses,
            rounds=rounds,
            usage=answer.usage,
            vessel=turn.conversation.vessel,
            answers=turn.user_message,
            stopped=answer.stopped,
        )
        consume_saved_rounds(turn.user_message)
        turn_saving(turn=turn, assistant_message=assistant_message)
        keep(answer.call)
    return assistant_message


def vessel_rounds(
    *,
    adapter: VesselAdapter,
    prompt: Prompt,
    tools: list[ToolDefinition],
    turn: TurnContext,
    ledger: TurnLedger,
    lock: TurnLock,
    stop: StopSignal,
    streamed: bool,
) -> Generator[TurnEvent, None, Answer]:
    """Call the vessel until it answers without tool calls, the round limit is reached, or the
    turn is stopped. Rounds an earlier attempt kept are replayed, not run again; each new round
    is kept as soon as its tools have run, with its call's ledger row (the last call's row goes
    with the reply)."""
    max_rounds = webui_settings.MAX_TOOL_ROUNDS
    rounds: list[ToolRound] = []
    usage = normalised_usage()
    for tool_round, round_usage in saved_tool_rounds(turn.user_message):
        rounds.append(tool_round)
        prompt = prompt.with_round(tool_round)
        for key in usage:
            usage[key] += int(round_usage.get(key, 0))
    used_ids = {use.id for tool_round in rounds for use in tool_round.tool_uses}
    while True:
        # Renews the lease to cover this vessel call's worst case from its start.
        if stop.is_set() or lock.poll(now=True):
            return Answer(text="", rounds=rounds, usage=usage, stopped=True)
        reply, partial = yield from streamed_reply(
            adapter=adapter, prompt=prompt, tools=tools, lock=lock, stop=stop, streamed=streamed
        )
        call = ledger.call(
            prompt=prompt,
            tools=tools,
            usage=reply.usage if reply is not None else normalised_usage(),
            round_index=len(rounds),
            stopped=reply is None,
        )
        if reply is None:
            return Answer(text=partial, rounds=rounds, usage=usage, stopped=True, call=call)
        for key, value in reply.usage.items():
            usage[key] += value
        if not reply.tool_calls:
            return Answer(text=reply.text, rounds=rounds, usage=usage, call=call)
        if len(rounds) >= max_rounds:
            note = f"(I stopped after {max_rounds} rounds of tool calls without a final answer.)"
            text = "\n\n".join(part for part in (reply.text, note) if part)
            return Answer(text=text, rounds=rounds, usage=usage, call=call)
        tool_round = yield from run_tool_round(turn=turn, reply=reply, used_ids=used_ids)
        lock.renew()  # only the lock's holder keeps the round
        with transaction.atomic():
            save_tool_round(
                user_message=turn.user_message,
                index=len(rounds),
                tool_round=tool_round,
                usage=reply.usage,
            )
            keep(call)
        rounds.append(tool_round)
        prompt = prompt.with_round(tool_round)


def streamed_reply(
    *,
    adapter: VesselAdapter,
    prompt: Prompt,
    tools: list[ToolDefinition],
    lock: TurnLock,
    stop: StopSignal,
    streamed: bool,
) -> Generator[TurnEvent, None, tuple[VesselReply | None, str]]:
    """One vessel call, streamed or whole: ``(reply, text)`` when it completed, ``(None, text so
    far)`` when the turn was stopped (the stream is closed then, ending the provider's response)."""
    if streamed:
        stream = adapter.stream(prompt=prompt, tools=tools)
    else:
        stream = whole_reply(adapter=adapter, prompt=prompt, tools=tools)
    pieces: list[str] = []
    try:
        for event in stream:
            if isinstance(event, ReplyDone):
                return event.reply, event.reply.text
            if isinstance(event, TextDelta):
                pieces.append(event.text)
                yield Delta(event.text)
            if stop.is_set() or lock.poll():
                stop.set()
                return None, replace_lone_surrogates("".join(pieces))
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    raise VesselError(
        f"{adapter.provider_name} ended its answer without finishing it.", code="bad_response"
    )


def whole_reply(
    *, adapter: VesselAdapter, prompt: Prompt, tools: list[ToolDefinition]
) -> Iterator[StreamEvent]:
    """The vessel called as before streaming existed (the JSON route's way), its reply as the
    events a stream ends with: the whole text as one piece, then the reply."""
    reply = adapter.complete(prompt=prompt, tools=tools)
    if reply.text:
        yield TextDelta(reply.text)
    yield ReplyDone(reply)
