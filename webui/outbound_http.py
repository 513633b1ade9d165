"""Every outgoing HTTP call, the vessels' and the memory engine's alike (Zulip's ``OutgoingSession``).

``requests`` timeouts bound each socket operation, not the call: a server that drips one byte a
second never trips a read timeout. :func:`exchange` reads whatever has arrived after each wait and
checks the clock and the size each time, so the deadline holds for the whole body. Each caller has
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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import requests
import urllib3

logger = logging.getLogger(__name__)

CHUNK_BYTES = 16 * 1024


class OutgoingFailure(Exception):
    """No usable answer came back; the subclass says why, the text never quotes a header."""


class DeadlineExceeded(OutgoingFailure):
    """A timeout passed, or the body was still arriving when the deadline passed."""


class NoTimeLeft(DeadlineExceeded):
    """The deadline had passed before the call could be sent; nothing was sent."""


class BodyTooLarge(OutgoingFailure):
    """The body grew past the cap; reading stopped there."""


class Unreachable(OutgoingFailure):
    """No connection could be made, or it broke while the answer arrived."""


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
    """A session for one role (``vessel``, ``memory-engine``): named, retry-free, timeout required."""

    def __init__(self, *, role: str) -> None:
        super().__init__()
        self.role = role
        adapter = _TimeoutRequiredAdapter(role=role)
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self.headers["User-Agent"] = f"pippa-webui ({role})"


@dataclass(frozen=True)
class Answer:
    """What the server sent back, read in full: any status, 3xx included (never followed)."""

    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


def exchange(
    session: OutgoingSession,
    method: str,
    url: str,
    *,
    data: bytes | None,
    headers: Mapping[str, str],
    connect_timeout: float,
    read_timeout: float,
    deadline_at: float,
    max_bytes: int,
) -> Answer:
    """One request and its whole answer by ``deadline_at`` (monotonic), within ``max_bytes``.

    The timeouts are cut to the time left; raises an :class:`OutgoingFailure` when no answer came.
    """
    remaining = deadline_at - time.monotonic()
    if remaining <= 0:
        raise NoTimeLeft("the deadline passed before the call was sent")
    try:
        response = session.request(
            method,
            url,
            data=data,
            headers=dict(headers),
            timeout=(min(connect_timeout, remaining), min(read_timeout, remaining)),
            stream=True,
            allow_redirects=False,
        )
        try:
            body = read_body(response, deadline_at=deadline_at, max_bytes=max_bytes)
        finally:
            response.close()
    except (requests.Timeout, urllib3.exceptions.ReadTimeoutError) as exc:
        raise DeadlineExceeded(f"a timeout passed ({type(exc).__name__})") from exc
    except (requests.ConnectionError, urllib3.exceptions.ProtocolError) as exc:
        raise Unreachable(type(exc).__name__) from exc
    except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
        raise RequestNotMade(type(exc).__name__) from None
    logger.debug(
        "%s: %s %s answered HTTP %d", session.role, method, url.split("?")[0], response.status_code
    )
    return Answer(
        status=response.status_code,
        reason=response.reason or "",
        headers=response.headers,
        body=body,
    )


def read_body(response: requests.Response, *, deadline_at: float, max_bytes: int) -> bytes:
    """The body of a streamed ``response``, within ``deadline_at`` (monotonic) and ``max_bytes``."""
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge(f"the answer declares {declared} bytes, over the cap of {max_bytes}")
    chunks = []
    size = 0
    while True:
        # read1 returns what has arrived (up to CHUNK_BYTES) rather than waiting for a full chunk.
        chunk = response.raw.read1(CHUNK_BYTES, decode_content=True)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(f"the answer passed the cap of {max_bytes} bytes")
        chunks.append(chunk)
        if time.monotonic() > deadline_at:
            raise DeadlineExceeded("the answer was still arriving at the deadline")
    return b"".join(chunks)


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
