"""Server-sent events for the chat routes: a turn's events as they happen.

With ``Accept: text/event-stream``, ``POST /api/conversations/<id>/messages/`` and ``.../retry/``
answer ``200`` with ``Content-Type: text/event-stream``: events ``event: <name>`` with one
``data:`` line of JSON each, in this order:

- ``turn`` ``{"turn_id"}``: first, once the turn holds the conversation; the id the stop route takes.
- ``delta`` ``{"text"}``: the next piece of the reply's text.
- ``tool`` ``{"id", "name", "verb", "state"}``: a tool use ``"started"``, later ``"finished"``.
- ``done``: last on success, the JSON route's 201 body ``{"user", "assistant"}``.
- ``error``: last on failure, the JSON route's error body ``{"error": {...}}`` with the status that
  route would have answered added as ``"status"`` (a 409 ``turn_in_progress`` comes alone).

Comment lines (``: keep-alive``) come while nothing else does. A request refused before the turn
starts (not logged in, a bad body, no such conversation, the member's replies being written
already at their cap: :mod:`webui.api.open_replies`) is answered in JSON with its status, as on
the JSON route. A send that meets the cap only as its turn claims the conversation (others arrived
at the same instant: :mod:`webui.turns.reply_cap`) gets one ``error`` event, status 429
``too_many_replies``, with nothing saved.

The turn runs in a worker thread that puts its events, already encoded, on a queue this response
reads. A client that goes away stops only the reading: the turn runs to its end and is saved.
"""

import json
import logging
import queue
import threading
from collections.abc import Iterator

from django.db import connections
from django.http import StreamingHttpResponse
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.utils.encoders import JSONEncoder

from webui.api.replies import turn_error_response, turn_response
from webui.models import Conversation, Message
from webui.turns.events import (
    Delta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnEvent,
    TurnFailed,
    TurnStarted,
)
from webui.turns.service import stream_turn
from webui.web.messages_json import MessageSerializer

logger = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
#: Seconds without an event before a comment line keeps proxies and the browser from giving up.
KEEP_ALIVE_SECONDS = 15.0
_END = b""


def server_error(user_message: Message | None) -> dict[str, object]:
    """The ``error`` event for a turn that failed unexpectedly (a bug, logged): with the saved
    user message in its details, as the JSON route's errors have it, once the turn had saved it,
    so the page offers Retry instead of a resend that would save it twice."""
    message = "The reply failed on the server (it is logged). Send the message again."
    details: dict[str, object] = {}
    if user_message is not None:
        message = (
            "The reply failed on the server (it is logged). Your message is kept: press Retry."
        )
        details["user_message"] = MessageSerializer(user_message).data
    return {
        "error": {"code": "server_error", "message": message, "details": details},
        "status": 500,
    }


def wants_event_stream(request: Request) -> bool:
    """Whether the request's ``Accept`` names ``text/event-stream``."""
    accepted = request.META.get("HTTP_ACCEPT", "").split(",")
    return any(part.split(";")[0].strip().lower() == EVENT_STREAM for part in accepted)


class EventStreamNegotiation(DefaultContentNegotiation):
    """Content negotiation for the routes that can stream: a request that asks for an event stream
    gets JSON for any answer that is not the stream (refusals before the turn starts)."""

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        if wants_event_stream(request):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)


def encode_event(name: str, data: object) -> bytes:
    """One server-sent event: its name and its data as one line of ASCII JSON."""
    line = json.dumps(data, cls=JSONEncoder, ensure_ascii=True, separators=(",", ":"))
    return f"event: {name}\ndata: {line}\n\n".encode("ascii")


def encode_turn_event(event: TurnEvent) -> bytes:
    """A turn event as the server-sent event the chat page reads."""
    match event:
        case TurnStarted(turn_id=turn_id):
            return encode_event("turn", {"turn_id": turn_id})
        case Delta(text=text):
            return encode_event("delta", {"text": text})
        case ToolStarted(id=id, name=name, verb=verb):
            return encode_event("tool", {"id": id, "name": name, "verb": verb, "state": "started"})
        case ToolFinished(id=id, name=name, verb=verb):
            return encode_event("tool", {"id": id, "name": name, "verb": verb, "state": "finished"})
        case TurnDone(result=result):
            return encode_event("done", turn_response(result).data)
        case TurnFailed(error=error):
            response = turn_error_response(error)
            return encode_event("error", {**response.data, "status": response.status_code})
    raise TypeError(f"Not a turn event: {event!r}")


def finish_turn(events: Iterator[TurnEvent]) -> None:
    """Close the turn's events: a turn left mid-way (an event that failed to encode) runs to its
    end and releases its lock now, in this thread. A failure there is logged, not raised."""
    close = getattr(events, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:
        logger.exception("A streamed turn failed while it was being closed")


def run_turn_in_worker(events: Iterator[TurnEvent]) -> "queue.SimpleQueue[bytes]":
    """Start a thread that runs ``events`` to its end, putting each one encoded on the queue
    returned and then an empty chunk. The thread does not depend on anyone reading the queue.
    The turn is over (closed, its lock free) before the empty chunk and the thread's database
    connections are closed."""
    pending: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def drain() -> None:
        saved: Message | None = None
        try:
            for event in events:
                if isinstance(event, TurnStarted):
                    saved = event.user_message
                pending.put(encode_turn_event(event))
        except Exception:
            logger.exception("A streamed turn failed unexpectedly")
            pending.put(encode_event("error", server_error(saved)))
        finally:
            finish_turn(events)
            pending.put(_END)
            connections.close_all()  # this thread's own connections

    # Not a daemon: a server shutting down waits for the turn to be saved.
    threading.Thread(target=drain, name="turn-stream").start()
    return pending


def read_events(pending: "queue.SimpleQueue[bytes]") -> Iterator[bytes]:
    """The response body: events as the worker puts them, a comment line while none comes."""
    yield b": stream open\n\n"  # sends the headers now, before the turn's first event
    while True:
        try:
            chunk = pending.get(timeout=KEEP_ALIVE_SECONDS)
        except queue.Empty:
            yield b": keep-alive\n\n"
            continue
        if chunk == _END:
            return
        yield chunk


def event_stream_response(events: Iterator[TurnEvent]) -> StreamingHttpResponse:
    """``events`` run in a worker thread and streamed as server-sent events, unbuffered."""
    response = StreamingHttpResponse(
        read_events(run_turn_in_worker(events)), content_type=EVENT_STREAM
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back
    return response


def message_event_stream(*, conversation: Conversation, text: str) -> StreamingHttpResponse:
    """``POST .../messages/`` as an event stream: save ``text`` and stream its answer."""
    return event_stream_response(stream_turn(conversation=conversation, text=text, streamed=True))


def retry_event_stream(
    *, conversation: Conversation, user_message: Message | None
) -> StreamingHttpResponse:
    """``POST .../retry/`` as an event stream: answer ``user_message`` (or the newest unanswered
    one) again, continuing from the tool rounds an earlier attempt saved."""
    return event_stream_response(
        stream_turn(conversation=conversation, user_message=user_message, streamed=True)
    )
