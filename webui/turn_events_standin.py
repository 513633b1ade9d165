"""TEMPORARY stand-in for Interface 2 of issue 15 (``SPEC15.md``): a turn's events.

This module exists only until ``webui.turns``' own ``stream_turn`` lands; the SSE route
(``webui/api/streams.py``) imports it in one place, and the stop route in ``webui/api/urls.py`` is
wired to :class:`StopView` here. When merging, point those two imports at the real module and delete
this file.

It follows Interface 2's names and shapes with the turn service as it is today: the whole turn runs
through :func:`webui.turns.answer_user_message`, then its saved tool uses come out as
``ToolStarted``/``ToolFinished`` and its text as ``Delta`` pieces (paced by the offline vessel's
``WEBUI_OFFLINE_PACE_SECONDS``), then ``TurnDone``. The turn lock is a per-process dictionary, and a
stop cuts the saved text down to the pieces sent so far; the ``stopped`` mark cannot be stored
(the ``Message`` model has no such column yet).
"""

import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webui.api.errors import error_response
from webui.models import Conversation, Message
from webui.selectors import conversations_for
from webui.turns import TurnError, TurnResult, answer_user_message, save_user_message
from webui.vessels.offline import pause_between_pieces

PIECE = re.compile(r"\s*\S+\s*")


@dataclass(frozen=True)
class TurnStarted:
    turn_id: str
    user_message: Message


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class ToolStarted:
    id: str
    name: str
    verb: str | None


@dataclass(frozen=True)
class ToolFinished:
    id: str
    name: str
    verb: str | None


@dataclass(frozen=True)
class TurnDone:
    result: TurnResult


@dataclass(frozen=True)
class TurnFailed:
    error: TurnError


TurnEvent = TurnStarted | Delta | ToolStarted | ToolFinished | TurnDone | TurnFailed


class StopSignal:
    """Set by whoever wants the running turn to stop; the turn checks it between pieces."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


_running: dict[str, tuple[str, StopSignal]] = {}
_running_lock = threading.Lock()


def request_stop(conversation: Conversation, turn_id: str) -> bool:
    """Ask the conversation's running turn ``turn_id`` to stop; False when no such turn runs."""
    with _running_lock:
        running = _running.get(str(conversation.pk))
    if running is None or running[0] != turn_id:
        return False
    running[1].set()
    return True


def stream_turn(
    *,
    conversation: Conversation,
    text: str | None = None,
    user_message: Message | None = None,
    stop: StopSignal | None = None,
) -> Iterator[TurnEvent]:
    """A turn as events (Interface 2); a running turn in the conversation makes it a 409."""
    turn_id = uuid.uuid4().hex
    signal = stop or StopSignal()
    with _running_lock:
        running = _running.get(str(conversation.pk))
        if running is None:
            _running[str(conversation.pk)] = (turn_id, signal)
    if running is not None:
        yield TurnFailed(
            TurnError(
                code="turn_in_progress",
                message="A reply is still being written in this conversation.",
                status=409,
                details={"turn_id": running[0]},
            )
        )
        return
    try:
        if user_message is None:
            user_message = save_user_message(conversation=conversation, text=text or "")
        yield TurnStarted(turn_id=turn_id, user_message=user_message)
        yield from _answer(conversation=conversation, user_message=user_message, stop=signal)
    finally:
        with _running_lock:
            _running.pop(str(conversation.pk), None)


def stream_retry(
    *, conversation: Conversation, stop: StopSignal | None = None
) -> Iterator[TurnEvent]:
    """Retry as events: the last message again if it is an unanswered user message."""
    last = conversation.messages.order_by("-sequence").first()
    if last is None or last.role != Message.Role.USER:
        yield TurnFailed(
            TurnError(
                code="nothing_to_retry",
                message="There is no unanswered message to retry in this conversation.",
                status=409,
            )
        )
        return
    yield from stream_turn(conversation=conversation, user_message=last, stop=stop)


def _answer(
    *, conversation: Conversation, user_message: Message, stop: StopSignal
) -> Iterator[TurnEvent]:
    try:
        result = answer_user_message(conversation=conversation, user_message=user_message)
    except TurnError as error:
        yield TurnFailed(error)
        return
    assistant = result.assistant_message
    for use in assistant.tool_uses:
        verb = use.get("input", {}).get("verb") if isinstance(use.get("input"), dict) else None
        yield ToolStarted(id=use["id"], name=use["name"], verb=verb)
        yield ToolFinished(id=use["id"], name=use["name"], verb=verb)
    paced = conversation.vessel.adapter == "offline"
    said = ""
    for piece in PIECE.findall(assistant.content) or (
        [assistant.content] if assistant.content else []
    ):
        if paced and said:
            pause_between_pieces()
        if stop.is_set():
            Message.objects.filter(pk=assistant.pk).update(content=said)
            assistant.content = said
            break
        said += piece
        yield Delta(text=piece)
    yield TurnDone(result=result)


class StopRequestSerializer(serializers.Serializer):
    turn_id = serializers.CharField()


@extend_schema(exclude=True)  # the stand-in stays out of the API document
class StopView(APIView):
    """``POST {"turn_id"}``: stop the conversation's running turn (202; 409 ``no_turn_running``)."""

    serializer_class = StopRequestSerializer

    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = Conversation.objects.filter(
            pk__in=conversations_for(request.user).values("pk"), pk=conversation_id
        ).first()
        if conversation is None:
            return error_response(
                code="not_found", message="No such conversation.", status_code=404
            )
        serializer = StopRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if not request_stop(conversation, serializer.validated_data["turn_id"]):
            return error_response(
                code="no_turn_running",
                message="No reply is being written in this conversation.",
                status_code=status.HTTP_409_CONFLICT,
            )
        return Response(serializer.validated_data, status=status.HTTP_202_ACCEPTED)
