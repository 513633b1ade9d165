"""What a turn tells whoever follows it (Interface 2 of issue 15), and how it is told to stop.

:func:`webui.turns.service.stream_turn` yields these in order: :class:`TurnStarted`, then any number of
:class:`Delta`, :class:`ToolStarted` and :class:`ToolFinished`, then exactly one of
:class:`TurnDone` or :class:`TurnFailed`. A turn refused before it began (another turn is running,
nothing to retry) yields only its :class:`TurnFailed`.
"""

import threading
from dataclasses import dataclass, field
from typing import Any

from webui.models import Message
from webui.turns.shutdown import interrupting


@dataclass
class TurnError(Exception):
    """A turn could not be answered. The user's message, if any, is saved and can be retried."""

    code: str
    message: str
    status: int = 502
    details: dict[str, Any] = field(default_factory=dict)
    user_message: Message | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class TurnResult:
    """The two rows a successful (or stopped) turn leaves behind."""

    user_message: Message
    assistant_message: Message


@dataclass(frozen=True)
class TurnStarted:
    """The turn holds the conversation's lock and answers ``user_message`` (saved already)."""

    turn_id: str
    user_message: Message


@dataclass(frozen=True)
class Delta:
    """A piece of the reply's text as the vessel gave it (a tool round's words included)."""

    text: str


@dataclass(frozen=True)
class ToolEvent:
    """A tool call's id and name; ``verb`` is its ``input["verb"]`` when it has one."""

    id: str
    name: str
    verb: str | None


@dataclass(frozen=True)
class ToolStarted(ToolEvent):
    """A tool call is about to run."""


@dataclass(frozen=True)
class ToolFinished(ToolEvent):
    """The tool call of the same id has its output (kept with the round, saved already)."""


@dataclass(frozen=True)
class TurnDone:
    """Last on success: the saved rows."""

    result: TurnResult


@dataclass(frozen=True)
class TurnFailed:
    """Last on failure: the same error the JSON route answers with."""

    error: TurnError


TurnEvent = TurnStarted | Delta | ToolStarted | ToolFinished | TurnDone | TurnFailed


class StopSignal:
    """Set it to stop a turn of this process: the turn closes the vessel's stream at its next
    piece, saves what had arrived as a stopped reply, and ends with :class:`TurnDone`. Another
    process stops a turn with :func:`webui.turns.lock.request_stop` instead.

    A process that is shutting down sets it too, once its turns may run no longer
    (:mod:`webui.turns.shutdown`); ``interrupted`` then says so, and the reply is saved marked
    interrupted rather than stopped."""

    def __init__(self) -> None:
        self._event = threading.Event()
        #: Set by the process's shutdown, not by a member's Stop.
        self.interrupted = False

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        if not self._event.is_set() and interrupting():
            self.interrupted = True
            self._event.set()
        return self._event.is_set()
