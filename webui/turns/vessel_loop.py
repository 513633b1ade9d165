"""The vessel loop of a turn: settle the pins, assemble the prompt, and call the vessel round by
round (tool calls run between rounds) until it replies without tool calls, the round limit is
reached, or the turn is stopped. What it comes to is a :class:`TurnReply`, which
:func:`webui.turns.saving.save_reply` saves.

Rounds an earlier attempt saved (:mod:`webui.turns.rounds`) are replayed, not run again; each new
round is saved as soon as its tools have run, so a retry continues from it.
"""

import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace

from django.db import transaction

from webui.conf import webui_settings
from webui.extensions import TurnContext
from webui.ledger.recorder import TurnLedger, save_ledger_row
from webui.models import VesselCall
from webui.prompt.assembly import assemble_prompt
from webui.prompt.pins import settle_pins
from webui.prompt.vault import VaultError
from webui.prompt_types import Prompt, ToolDefinition, ToolRound
from webui.text.lone_surrogates import replace_lone_surrogates
from webui.turns.busy_database import retry_while_locked
from webui.turns.events import Delta, StopSignal, TurnError, TurnEvent
from webui.turns.lock import TurnLock
from webui.turns.rounds import save_tool_round, saved_tool_rounds
from webui.turns.tool_calls import run_tool_round
from webui.vessels.base import VesselAdapter, VesselReply, normalised_usage
from webui.vessels.errors import VesselConfigurationError, VesselError
from webui.vessels.family_words import family_sentence
from webui.vessels.registry import adapter_for
from webui.vessels.reply_types import ReplyDone, StreamEvent, TextDelta

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnReply:
    """What the vessel's rounds came to, before it is saved: the final (or, stopped, partial)
    text, the tool rounds, the usage summed over the calls, and whether the turn was stopped."""

    text: str
    rounds: list[ToolRound]
    usage: dict[str, int]
    stopped: bool = False
    #: Stopped by the process's shutdown (:mod:`webui.turns.shutdown`), not by the member.
    interrupted: bool = False
    #: The cache ledger's row for the last vessel call, saved with the reply.
    call: VesselCall | None = None


@dataclass(frozen=True)
class TurnControl:
    """What steers a running turn from outside its vessel calls: the conversation's lock (its
    lease renewed by the turn's heartbeat, its stop flag read between pieces), the stop signal,
    and whether the vessel's reply streams."""

    lock: TurnLock
    stop: StopSignal
    streamed: bool


def reply_events(
    *, turn: TurnContext, control: TurnControl
) -> Generator[TurnEvent, None, TurnReply]:
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
        replying = vessel_rounds(
            adapter=adapter, prompt=prompt, tools=tools, turn=turn, ledger=ledger, control=control
        )
        reply = yield from replying
        # A stop the process's shutdown made (webui.turns.shutdown) is saved as interrupted.
        return replace(reply, interrupted=reply.stopped and control.stop.interrupted)
    except VaultError as exc:
        error = TurnError(
            code="vault_unavailable",
            message=f"{conversation.soul.name}'s vault cannot be read: {exc} Ask an admin to fix it.",
            status=503,
            user_message=turn.user_message,
        )
        raise error from exc
    except VesselError as exc:
        raise vessel_failure(turn, exc) from exc


def vessel_failure(turn: TurnContext, exc: VesselError) -> TurnError:
    """The turn's error for a vessel that could not answer: the cause in a family's words, with
    the provider's detail logged and kept on the vessel for the admin (never on the chat)."""
    vessel = turn.conversation.vessel
    logger.warning("Vessel %s failed (%s): %s", vessel.slug, exc.code, exc.message)
    if not isinstance(exc, VesselConfigurationError):
        vessel.record_outcome(answered=False, problem=exc.message)
    details = {"vessel": vessel.slug, "retryable": exc.retryable}
    if exc.retry_after is not None:
        details["retry_after"] = exc.retry_after
    return TurnError(
        code=exc.code,
        message=family_sentence(vessel.name, exc),
        status=502,
        details=details,
        user_message=turn.user_message,
    )


def vessel_rounds(
    *,
    adapter: VesselAdapter,
    prompt: Prompt,
    tools: list[ToolDefinition],
    turn: TurnContext,
    ledger: TurnLedger,
    control: TurnControl,
) -> Generator[TurnEvent, None, TurnReply]:
    """Call the vessel until it answers without tool calls, the round limit is reached, or the
    turn is stopped. Rounds an earlier attempt saved are replayed, not run again; each new round
    is saved as soon as its tools have run, with its call's ledger row (the last call's row goes
    with the reply)."""
    max_rounds = webui_settings.MAX_TOOL_ROUNDS
    lock, stop = control.lock, control.stop
    rounds: list[ToolRound] = []
    usage = normalised_usage()
    for tool_round, round_usage in saved_tool_rounds(turn.user_message):
        rounds.append(tool_round)
        prompt = prompt.with_round(tool_round)
        for key in usage:
            usage[key] += int(round_usage.get(key, 0))
    used_ids = {use.id for tool_round in rounds for use in tool_round.tool_uses}
    while True:
        if stop.is_set() or lock.stop_requested(now=True):
            return TurnReply(text="", rounds=rounds, usage=usage, stopped=True)
        reply, partial = yield from streamed_reply(
            adapter=adapter, prompt=prompt, tools=tools, control=control
        )
        call = ledger.call(
            prompt=prompt,
            tools=tools,
            usage=reply.usage if reply is not None else normalised_usage(),
            round_index=len(rounds),
            stopped=reply is None,
        )
        if reply is None:
            return TurnReply(text=partial, rounds=rounds, usage=usage, stopped=True, call=call)
        adapter.vessel.record_outcome(answered=True)
        for key, value in reply.usage.items():
            usage[key] += value
        if not reply.tool_calls:
            return TurnReply(text=reply.text, rounds=rounds, usage=usage, call=call)
        if len(rounds) >= max_rounds:
            note = f"(I stopped after {max_rounds} rounds of tool calls without a final answer.)"
            text = "\n\n".join(part for part in (reply.text, note) if part)
            return TurnReply(text=text, rounds=rounds, usage=usage, call=call)
        lock.renew()  # a turn that lost its lock runs no tool (and so sends no ask)
        tool_round = yield from run_tool_round(turn=turn, reply=reply, used_ids=used_ids)
        lock.renew()  # only the lock's holder saves the round
        keep_round(
            turn=turn,
            lock=lock,
            index=len(rounds),
            tool_round=tool_round,
            usage=reply.usage,
            call=call,
        )
        rounds.append(tool_round)
        prompt = prompt.with_round(tool_round)


def keep_round(
    *,
    turn: TurnContext,
    lock: TurnLock,
    index: int,
    tool_round: ToolRound,
    usage: dict[str, int],
    call: VesselCall,
) -> None:
    """Save round ``index`` with its call's ledger row, tried again while the database is locked;
    from then on the round's text is kept with the round, not as the reply's text so far."""
    lock.so_far.clear()

    def save() -> None:
        with transaction.atomic():
            save_tool_round(
                user_message=turn.user_message, index=index, tool_round=tool_round, usage=usage
            )
            save_ledger_row(call)
            lock.mine().update(turn_partial_text="")

    retry_while_locked(save, budget=lock.budget, what="A tool round's save")


def streamed_reply(
    *,
    adapter: VesselAdapter,
    prompt: Prompt,
    tools: list[ToolDefinition],
    control: TurnControl,
) -> Generator[TurnEvent, None, tuple[VesselReply | None, str]]:
    """One vessel call, streamed or whole: ``(reply, text)`` when it completed, ``(None, text so
    far)`` when the turn was stopped (the stream is closed then, ending the provider's response)."""
    if control.streamed:
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
                control.lock.so_far.add(event.text)
                yield Delta(event.text)
            if control.stop.is_set() or control.lock.stop_requested():
                control.stop.set()
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
