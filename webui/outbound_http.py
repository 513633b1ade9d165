"""Every outgoing HTTP call, the vessels' and the memory engine's alike (Zulip's ``OutgoingSession``).

``requests`` timeouts bound each socket operation, not the call: a server that drips one byte a
second never trips a read timeout. :func:`exchange` reads whatever has arrived after each wait and
checks the clock and the size each time, so the deadline holds for the whole body.
:func:`open_stream` is the same call for a response read as it arrives (a streamed reply): the same
checks run after each piece, and the caller can stop and close at any point. Each caller has
an :class:`OutgoingSession` that names its role (in the ``User-Agent`` and the logs) and refuses a
call without a timeout; redirects are never followed and ``urllib3`` never retries, because a retry
must fit the caller's deadline. What went wrong on the wire comes back as one of this module's
exceptions, for each caller to turn into its own (``VesselError``, ``EngineFailure``) in its own
words. ``Retry-After`` and full-jitter backoff live here too, so every caller waits the same way.
"""

import logging
import math
import random
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, Unpack

import requests
import urllib3

logger = logging.getLogger(__name__)

CHUNK_BYTES = 16 * 1024


class OutgoingFailure(Exception):
    """No usable response came back; the subclass says why, the text never quotes a header."""


class DeadlineExceeded(OutgoingFailure):
    """A timeout passed, or the body was still arriving when the deadline passed."""


class NoTimeLeft(DeadlineExceeded):
    """The deadline had passed before the call could be sent; nothing was sent."""


class BodyTooLarge(OutgoingFailure):
    """The body grew past the cap; reading stopped there."""


class Unreachable(OutgoingFailure):
    """No connection could be made, or it broke while the response arrived."""


class RequestNotMade(OutgoingFailure):
    """``requests`` refused to build or send the call (a malformed URL or header value).

    Only the exception's type is kept: its text can quote a header value, and so a key.
    """


class _TimeoutRequiredAdapter(requests.adapters.HTTPAdapter):
    """Sends with no retries of its own, and never without a timeout."""

    def __init__(self, *, role: str) -> None:
        super().__init__(max_retries=0)
        self.role = role

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        if kwargs.get("timeout") is None:
            raise TypeError(f"An outgoing call for {self.role} needs a timeout.")
        return super().send(request, **kwargs)


class OutgoingSession(requests.Session):
    """A session for one role (``vessel``, ``memory-engine``): named, retry-free, timeout required.

    ``from_environment=False`` stops ``requests`` reading the environment at each call: no proxy
    from ``HTTP(S)_PROXY``, and no ``~/.netrc`` login, which would replace the ``Authorization``
    header the caller set. For a sibling service on this host or network (the memory engine),
    which takes its own token; it also spares each call a walk of the environment.
    """

    def __init__(self, *, role: str, from_environment: bool = True) -> None:
        super().__init__()
        self.role = role
        self.trust_env = from_environment
        adapter = _TimeoutRequiredAdapter(role=role)
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self.headers["User-Agent"] = f"pippa-webui ({role})"


@dataclass(frozen=True)
class ReadResponse:
    """What the server sent back, read in full within the call's bounds: any status, 3xx included
    (never followed)."""

    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


@contextmanager
def wire_failures() -> Iterator[None]:
    """What ``requests`` and ``urllib3`` raise while a call is made or its body read, as one of
    this module's exceptions: a timeout, a broken connection, or a call that could not be made."""
    try:
        yield
    except (requests.Timeout, urllib3.exceptions.ReadTimeoutError) as exc:
        raise DeadlineExceeded(f"a timeout passed ({type(exc).__name__})") from exc
    except (requests.ConnectionError, urllib3.exceptions.ProtocolError) as exc:
        raise Unreachable(type(exc).__name__) from exc
    except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
        raise RequestNotMade(type(exc).__name__) from None


class StreamedResponse:
    """A response whose status and headers have come and whose body is read as it arrives.

    :meth:`chunks` gives the body piece by piece, checking the deadline and the size cap after
    each piece, so a consumer can act on each piece while the rest is on its way. :meth:`close`
    hands the connection back at once, whether or not the body was read to its end.
    """

    def __init__(self, response: requests.Response, *, deadline_at: float, max_bytes: int) -> None:
        self.response = response
        self.status = response.status_code
        self.reason = response.reason or ""
        self.headers: Mapping[str, str] = response.headers
        self.deadline_at = deadline_at
        self.max_bytes = max_bytes

    def chunks(self) -> Iterator[bytes]:
        """The body as it arrives; raises an :class:`OutgoingFailure` when it breaks off, grows
        past the cap, or is still arriving at the deadline."""
        declared = self.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise BodyTooLarge(
                f"the response declares {declared} bytes, over the cap of {self.max_bytes}"
            )
        size = 0
        while True:
            with wire_failures():
                # read1 returns what has arrived (up to CHUNK_BYTES) rather than waiting for more.
                chunk = self.response.raw.read1(CHUNK_BYTES, decode_content=True)
            if not chunk:
                return
            size += len(chunk)
            if size > self.max_bytes:
                raise BodyTooLarge(f"the response passed the cap of {self.max_bytes} bytes")
            yield chunk
            if time.monotonic() > self.deadline_at:
                raise DeadlineExceeded("the response was still arriving at the deadline")

    def read(self) -> bytes:
        """The rest of the body, within the deadline and the cap."""
        return b"".join(self.chunks())

    def close(self) -> None:
        """Hand the connection back now. One whose body was read to its end is already back in
        the session's pool for the next call (no new connection, no new TLS handshake); one with
        body left unread is closed, and what was not read is dropped."""
        self.response.close()


class CallBounds(TypedDict):
    """What one call sends besides its method and URL, and the bounds it must keep."""

    data: bytes | None
    headers: Mapping[str, str]
    connect_timeout: float
    read_timeout: float
    #: The monotonic time by which the whole response must have come.
    deadline_at: float
    max_bytes: int


def open_stream(
    session: OutgoingSession, method: str, url: str, **call: Unpack[CallBounds]
) -> StreamedResponse:
    """Send one request and return as soon as its status and headers are in, by ``deadline_at``
    (monotonic); the body, of at most ``max_bytes``, is the caller's to read and close.

    The timeouts are cut to the time left; raises an :class:`OutgoingFailure` when no response came.
    """
    remaining = call["deadline_at"] - time.monotonic()
    if remaining <= 0:
        raise NoTimeLeft("the deadline passed before the call was sent")
    with wire_failures():
        response = session.request(
            method,
            url,
            data=call["data"],
            headers=dict(call["headers"]),
            timeout=(min(call["connect_timeout"], remaining), read_timeout(call, remaining)),
            stream=True,
            allow_redirects=False,
        )
    logger.debug(
        "%s: %s %s answered HTTP %d", session.role, method, url.split("?")[0], response.status_code
    )
    return StreamedResponse(response, deadline_at=call["deadline_at"], max_bytes=call["max_bytes"])


#: Seconds a timed-out read takes to come back past its timeout (the kernel's timer slack, the HTTP
#: library unwinding: a few milliseconds on a loaded machine). A read cut to the deadline leaves
#: them, so the call is over by its deadline, not just after it.
UNWIND_SECONDS = 0.02


def read_timeout(call: CallBounds, remaining: float) -> float:
    """The call's read timeout, cut to the ``remaining`` seconds less :data:`UNWIND_SECONDS` (never
    below half of what remains, so a short budget still gets its read)."""
    return min(call["read_timeout"], max(remaining - UNWIND_SECONDS, remaining / 2))


def exchange(
    session: OutgoingSession, method: str, url: str, **call: Unpack[CallBounds]
) -> ReadResponse:
    """One request and its whole response by ``deadline_at`` (monotonic), within ``max_bytes``.

    The timeouts are cut to the time left; raises an :class:`OutgoingFailure` when no response came.
    """
    streamed = open_stream(session, method, url, **call)
    try:
        body = streamed.read()
    finally:
        streamed.close()
    return ReadResponse(
        status=streamed.status, reason=streamed.reason, headers=streamed.headers, body=body
    )


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from ``now``: a number of seconds or an HTTP date; else ``None``.

    A time in the past is 0; a value that is neither (or is not finite) is ``None``, as if absent.
    A date without a zone (``-0000``) is read as UTC, as RFC 9110 dates are.
    """
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def full_jitter_delay(*, attempt: int, base: float, cap: float) -> float:
    """AWS "full jitter" before retry ``attempt`` (0 first): uniform(0, min(cap, base * 2**attempt))."""
    return random.uniform(0, min(cap, base * 2 ** min(attempt, 32)))
