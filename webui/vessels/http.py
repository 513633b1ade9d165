"""What the HTTP provider adapters share (django-anymail's ``base_requests`` in spirit).

The wire itself is :mod:`webui.outbound_http` (a session for the ``vessel`` role, connect and read
timeouts, a total deadline checked while the body is read, a size cap, redirects never followed).
What is the vessels' own lives here: posting canonical JSON, turning what went wrong into a
:class:`VesselError` that says whether a retry may help, and retrying those that may (429, 503/529
overload, 5xx, timeouts, refused connections) a bounded number of times within the vessel's
deadline, with full-jitter backoff honouring ``Retry-After``. A streamed call is the same POST
read as it arrives (:meth:`RequestsAdapter.send_stream`), retried only before its body begins.
"""

import json
import logging
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

from webui.conf import webui_settings
from webui.outbound_http import (
    BodyTooLarge,
    CallBounds,
    DeadlineExceeded,
    OutgoingFailure,
    OutgoingSession,
    ReadResponse,
    RequestNotMade,
    StreamedResponse,
    Unreachable,
    exchange,
    full_jitter_delay,
    open_stream,
    retry_after_seconds,
)
from webui.text.redaction import mask_secrets
from webui.vessels.base import VesselAdapter
from webui.vessels.encoding import request_bytes
from webui.vessels.errors import VesselError
from webui.vessels.streaming import Framing, stream_records

T = TypeVar("T")

logger = logging.getLogger(__name__)

SESSION = OutgoingSession(role="vessel")

MAX_RESPONSE_BYTES = 10 * 1024 * 1024

#: What a streamed request asks for, by how the provider frames its records.
STREAM_ACCEPT: dict[str, str] = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}

# Tests replace this to record delays instead of waiting them out.
sleep = time.sleep


def body_excerpt(raw: bytes, *, chars: int = 200) -> str:
    """The start of a provider's body as text to quote, secrets masked before it is cut (so a
    cut can never leave part of a key behind)."""
    return mask_secrets(raw[: chars * 5].decode("utf-8", "replace"))[:chars]


def backoff_delay(attempt: int) -> float:
    """The full-jitter wait before retry ``attempt`` (0 first), from the ``VESSEL_RETRY_*`` settings."""
    return full_jitter_delay(
        attempt=attempt,
        base=webui_settings.VESSEL_RETRY_BASE_DELAY,
        cap=webui_settings.VESSEL_RETRY_MAX_DELAY,
    )


def error_for_status(
    *, status: int, message: str, provider_code: str | None, retry_after: float | None
) -> VesselError:
    """Our exception for a provider's HTTP error, with whether a retry may help."""
    code, retryable = "provider_error", False
    if 300 <= status < 400:
        code = "unexpected_redirect"
    elif status == 400:
        code = "bad_request"
    elif status == 401:
        code = "auth_failed"
    elif status == 403:
        code = "forbidden"
    elif status == 404:
        code = "not_found"
    elif status == 408:
        code, retryable = "timeout", True
    elif status == 413:
        code = "request_too_large"
    elif status == 429:
        quota = provider_code in {"insufficient_quota", "billing_hard_limit_reached"}
        code, retryable = ("quota_exhausted", False) if quota else ("rate_limited", True)
    elif status in (503, 529):
        code, retryable = "overloaded", True
    elif status >= 500:
        code, retryable = "server_error", True
    return VesselError(
        message,
        code=code,
        retryable=retryable,
        status=status,
        provider_code=provider_code,
        retry_after=retry_after,
    )


class RequestsAdapter(VesselAdapter):
    """An adapter that POSTs JSON to a provider over HTTP."""

    #: Used when the vessel's ``base_url`` is blank; ``None`` means the vessel must set one.
    default_base_url: ClassVar[str | None] = None

    @property
    def base_url(self) -> str:
        return (self.vessel.base_url or self.default_base_url or "").rstrip("/")

    def endpoint(self, request: dict[str, Any]) -> str:
        """The URL the request is posted to."""
        raise NotImplementedError

    def stream_endpoint(self, request: dict[str, Any]) -> str:
        """The URL a streamed request is posted to; the same as :meth:`endpoint` unless the
        provider streams at a URL of its own."""
        return self.endpoint(request)

    def headers(self) -> dict[str, str]:
        """Headers for every call (authentication, API version)."""
        return {}

    def wire_body(self, request: dict[str, Any]) -> dict[str, Any]:
        """The JSON sent: the request minus anything kept only for our own use."""
        return request

    def error_message(self, body: Any) -> tuple[str | None, str | None]:
        """The provider's own error message and error code, read from its error body."""
        return None, None

    def configuration_problem(self) -> str | None:
        if not self.base_url:
            return (
                f"The vessel {self.vessel.name} needs a base URL (for example "
                "http://127.0.0.1:8080/v1): its adapter has no default endpoint."
            )
        return super().configuration_problem()

    def send(self, request: dict[str, Any]) -> Any:
        """POST ``request``; retry what may pass, within the vessel's deadline."""
        deadline_at = time.monotonic() + self.vessel.deadline
        return self.with_retries(
            lambda: self.post_once(request, deadline_at=deadline_at), deadline_at=deadline_at
        )

    def send_stream(
        self, request: dict[str, Any], *, framing: Framing
    ) -> Generator[bytes, None, None]:
        """POST ``request`` for a streamed response and yield its records as they arrive.

        Retries (as :meth:`send` makes them) happen only until the first byte of the body has
        come; after it, a broken connection, the size cap or the vessel's deadline (checked
        after each piece) ends the stream with a ``VesselError``. Closing the generator closes
        the connection at once.
        """
        deadline_at = time.monotonic() + self.vessel.deadline
        response, body = self.with_retries(
            lambda: self.open_stream_once(request, deadline_at=deadline_at, framing=framing),
            deadline_at=deadline_at,
        )
        try:
            yield from stream_records(body, framing=framing)
        finally:
            response.close()

    def with_retries(self, attempt: Callable[[], T], *, deadline_at: float) -> T:
        """``attempt()``, tried again after a retryable ``VesselError`` while retries are left and
        the wait fits before ``deadline_at``: ``Retry-After`` when the provider gave one, else
        full-jitter backoff."""
        tries = 0
        while True:
            try:
                return attempt()
            except VesselError as error:
                if not error.retryable or tries >= self.vessel.max_retries:
                    raise
                delay = error.retry_after if error.retry_after is not None else backoff_delay(tries)
                if time.monotonic() + delay >= deadline_at:
                    raise
                logger.info(
                    "Vessel %s: %s, retry %d in %.2f s",
                    self.vessel.slug,
                    error.code,
                    tries + 1,
                    delay,
                )
                sleep(delay)
                tries += 1

    def post_once(self, request: dict[str, Any], *, deadline_at: float) -> Any:
        """One POST within the vessel's timeouts, the deadline and the size cap; its JSON response."""
        with self.wire_errors():
            response = exchange(
                SESSION,
                "POST",
                self.endpoint(request),
                **self.call_bounds(request, accept="application/json", deadline_at=deadline_at),
            )
        return self.response_json(response)

    def open_stream_once(
        self, request: dict[str, Any], *, deadline_at: float, framing: Framing
    ) -> tuple[StreamedResponse, Iterator[bytes]]:
        """One POST for a streamed response, kept open once its body has begun: the response and
        its body (first piece included) as it arrives. An error status raises as :meth:`send` would."""
        bounds = self.call_bounds(request, accept=STREAM_ACCEPT[framing], deadline_at=deadline_at)
        with self.wire_errors():
            response = open_stream(SESSION, "POST", self.stream_endpoint(request), **bounds)
        try:
            with self.wire_errors():
                if response.status >= 300:
                    body = response.read()
                    self.response_json(
                        ReadResponse(response.status, response.reason, response.headers, body)
                    )
                chunks = response.chunks()
                first = next(chunks, b"")
        except BaseException:
            response.close()
            raise
        return response, self.rest_of_body(first, chunks)

    def call_bounds(
        self, request: dict[str, Any], *, accept: str, deadline_at: float
    ) -> CallBounds:
        """The body, headers and bounds of one POST of ``request``: canonical JSON, the vessel's
        timeouts, ``deadline_at`` and the size cap."""
        return CallBounds(
            data=request_bytes(self.wire_body(request), messages_key=self.messages_key),
            headers={"Content-Type": "application/json", "Accept": accept, **self.headers()},
            connect_timeout=self.vessel.connect_timeout,
            read_timeout=self.vessel.read_timeout,
            deadline_at=deadline_at,
            max_bytes=MAX_RESPONSE_BYTES,
        )

    def rest_of_body(self, first: bytes, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """A streamed body from its ``first`` piece on; a failure after it is a ``VesselError``
        that says the answer broke off."""
        yield first
        try:
            yield from chunks
        except OutgoingFailure as failure:
            if isinstance(failure, Unreachable):
                raise VesselError(
                    f"The connection to {self.provider_name} broke before the answer was "
                    f"complete ({failure}).",
                    code="connection_lost",
                    retryable=True,
                ) from failure
            raise self.transport_error(failure) from failure

    @contextmanager
    def wire_errors(self) -> Iterator[None]:
        """A call on the wire, with what went wrong there as a ``VesselError``."""
        try:
            yield
        except RequestNotMade as failure:
            # Only the exception's type: its text can quote a header value, and so the API key.
            raise VesselError(
                f"The request to {self.provider_name} could not be made ({failure}); "
                "check the vessel's base URL and key.",
                code="request_failed",
            ) from None
        except OutgoingFailure as failure:
            raise self.transport_error(failure) from failure

    def response_json(self, response: ReadResponse) -> Any:
        """The JSON of a 2xx response; a :class:`VesselError` for any other status or a non-JSON
        body."""
        try:
            body = json.loads(response.body) if response.body else None
        except ValueError:
            body = None
        if response.status >= 300:
            message, provider_code = self.error_message(body) if body is not None else (None, None)
            detail = str(message or "") or body_excerpt(response.body) or response.reason
            raise error_for_status(
                status=response.status,
                message=f"{self.provider_name} answered HTTP {response.status}: {detail}",
                provider_code=provider_code,
                retry_after=retry_after_seconds(response.headers.get("Retry-After")),
            )
        if body is None:
            raise VesselError(
                f"{self.provider_name} answered with a body that is not JSON: "
                f"{body_excerpt(response.body)!r}",
                code="bad_response",
                status=response.status,
            )
        return body

    def transport_error(self, failure: OutgoingFailure) -> VesselError:
        """Our error for an answer that never (fully) came: too large, too late, or unreachable."""
        if isinstance(failure, BodyTooLarge):
            return VesselError(
                f"{self.provider_name} sent too large an answer ({failure}); refused.",
                code="response_too_large",
            )
        if isinstance(failure, DeadlineExceeded):
            return self.timeout_error()
        return VesselError(
            f"{self.provider_name} at {self.base_url} could not be reached ({failure}).",
            code="connection_failed",
            retryable=True,
        )

    def timeout_error(self) -> VesselError:
        return VesselError(
            f"{self.provider_name} did not answer within {self.vessel.deadline:g} seconds.",
            code="timeout",
            retryable=True,
        )
