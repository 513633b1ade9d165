"""A vessel's reply as it arrives: the readers that cut a streamed body into records, and the
parser each streaming adapter fills in for its provider's format.

:meth:`VesselAdapter.stream <webui.vessels.base.VesselAdapter.stream>` yields the events of
:mod:`webui.vessels.reply_types` (:class:`TextDelta` and :class:`ToolCallStarted` while the reply
arrives, then one :class:`ReplyDone`). Each provider's records are read by a :class:`StreamParser`, which also assembles them into the
provider's non-streamed response, so the adapter's own ``parse_response`` (and its checks) turns a
streamed response into exactly the reply ``complete()`` gives for the same response.
"""

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, Literal

from webui.prompt_types import Prompt, derived_call_id
from webui.text.lone_surrogates import lone_surrogate_path
from webui.vessels.errors import VesselError, unencodable_text_error
from webui.vessels.reply_types import PartialEvent, TextDelta, ToolCallStarted

#: How a streamed body is cut into records: server-sent events, or one JSON object a line.
Framing = Literal["sse", "ndjson"]


def body_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The complete lines of a body that arrives in pieces, without their line endings.

    A line may be split over pieces (a character too: lines are decoded only once whole, by the
    reader of the record). What follows the last line ending is dropped: a body that broke off
    there can only have left part of a record.
    """
    pending = b""
    for chunk in chunks:
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            yield line.removesuffix(b"\r")


def sse_data(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The data of each server-sent event, as the event completes (at its blank line): its
    ``data:`` lines joined by newlines. Comments, other fields and events without data are passed
    over; an event still open when the body ends is dropped, as the SSE standard says."""
    data: list[bytes] = []
    for line in body_lines(chunks):
        if not line:
            if data:
                yield b"\n".join(data)
            data = []
            continue
        name, _, value = line.partition(b":")
        if name == b"data":
            data.append(value.removeprefix(b" "))


def ndjson_records(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Each non-blank line of a newline-delimited JSON body, as the line completes."""
    for line in body_lines(chunks):
        if line.strip():
            yield line


RECORD_READERS: dict[str, Callable[[Iterable[bytes]], Iterator[bytes]]] = {
    "sse": sse_data,
    "ndjson": ndjson_records,
}


def stream_records(chunks: Iterable[bytes], *, framing: Framing) -> Iterator[bytes]:
    """The records of a streamed body framed as ``framing``, each as soon as it is whole."""
    return RECORD_READERS[framing](chunks)


class StreamParser(ABC):
    """One streamed response in one provider's format, read record by record.

    :meth:`feed` gives the events a record holds; :meth:`response` gives the provider's non-streamed
    response that the records add up to, for the adapter's ``parse_response``. A subclass reads one
    record in :meth:`read` (raising :meth:`failure` for an error event) and builds the response in
    :meth:`assembled`; it sets :attr:`finished` when the provider marks the response's end.
    """

    #: How the provider frames its records.
    framing: ClassVar[Framing] = "sse"
    #: A record that is not JSON and only marks the end (OpenAI Chat's ``[DONE]``), if any.
    end_marker: ClassVar[bytes | None] = None
    #: The provider's error codes that say trying again later may help.
    transient_errors: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, *, prompt: Prompt, provider_name: str) -> None:
        self.prompt = prompt
        self.provider_name = provider_name
        #: Whether the provider has marked the end of its response.
        self.finished = False
        #: The text pieces passed on so far, in order.
        self.said: list[str] = []
        #: The tool calls that came whole, in order (see :meth:`call_arrived`).
        self.arrived: list[dict[str, Any]] = []
        self.calls_started = 0

    def feed(self, data: bytes) -> list[PartialEvent]:
        """The events in one record (a JSON text, or the end marker)."""
        if self.end_marker is not None and data.strip() == self.end_marker:
            self.finished = True
            return []
        return self.read(json.loads(data))

    @abstractmethod
    def read(self, record: Any) -> list[PartialEvent]:
        """The events in one decoded record; raises :meth:`failure` for an error the provider sent."""

    @abstractmethod
    def assembled(self) -> Any:
        """The records so far as the provider's non-streamed response."""

    def response(self) -> Any:
        """The whole response, in the provider's non-streamed shape; a ``VesselError`` when the
        stream ended before the provider marked the response's end."""
        if not self.finished:
            raise VesselError(
                f"{self.provider_name} stopped sending before the answer was complete.",
                code="connection_lost",
                retryable=True,
            )
        return self.assembled()

    def text(self, piece: str) -> list[PartialEvent]:
        """A piece of text to pass on (none for an empty piece); one holding a lone surrogate is
        refused at once, as the whole reply would be."""
        if not piece:
            return []
        if lone_surrogate_path(piece):
            raise unencodable_text_error(self.provider_name, "its text")
        self.said.append(piece)
        return [TextDelta(piece)]

    def call_started(self, *, id: str, name: str) -> ToolCallStarted:
        """The event for the next tool call, numbered in the order calls began."""
        event = ToolCallStarted(index=self.calls_started, id=id, name=name)
        self.calls_started += 1
        return event

    def call_arrived(self, call: dict[str, Any], *, id: str | None, name: str) -> ToolCallStarted:
        """The event for a tool ``call`` that came whole (kept in :attr:`arrived`). A call with no
        ``id`` gets the one the finished reply derives for it from its place among the calls."""

        self.arrived.append(call)
        return self.call_started(
            id=id or derived_call_id(self.prompt, self.calls_started), name=name
        )

    def failure(self, message: Any, *, provider_code: Any) -> VesselError:
        """The error for an error event the provider sent in the middle of its response."""
        code = str(provider_code) if provider_code else None
        return VesselError(
            f"{self.provider_name} broke off its answer with an error: "
            f"{message or 'no reason given'}",
            code="provider_error",
            retryable=code in self.transient_errors,
            provider_code=code,
        )
