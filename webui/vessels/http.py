"""Shared HTTP machinery for the provider adapters (django-anymail's ``base_requests`` in spirit).

One ``requests.Session`` for the process; every call has a connect timeout, a read timeout and a
total deadline (``requests`` timeouts are per socket operation, so a server dripping a byte a
second is cut off by our own clock while the body is read); bodies are capped in size; redirects
are never followed; retryable failures (429, 503/529 overload, 5xx, timeouts, refused connections)
are retried a bounded number of times with full-jitter backoff, honouring ``Retry-After``.
"""

import json
import logging
import random
import time
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import requests
import urllib3
from django.conf import settings
from django.utils import timezone

from webui.canonical import canonical_bytes
from webui.outbound_http import BodyTooLarge, DeadlineExceeded, read_body
from webui.redaction import mask_secrets
from webui.vessels.base import VesselAdapter
from webui.vessels.errors import VesselError

logger = logging.getLogger(__name__)

SESSION = requests.Session()
# Retries are ours (they must respect the deadline), never urllib3's.
SESSION.mount("https://", requests.adapters.HTTPAdapter(max_retries=0))
SESSION.mount("http://", requests.adapters.HTTPAdapter(max_retries=0))

MAX_RESPONSE_BYTES = 10 * 1024 * 1024

# Tests replace this to record delays instead of waiting them out.
sleep = time.sleep


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: either a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - timezone.now()).total_seconds())


def body_excerpt(raw: bytes, *, chars: int = 200) -> str:
    """The start of a provider's body as text to quote, secrets masked before it is cut (so a
    cut can never leave part of a key behind)."""
    return mask_secrets(raw[: chars * 5].decode("utf-8", "replace"))[:chars]


def backoff_delay(attempt: int) -> float:
    """AWS "full jitter": uniform(0, min(cap, base * 2**attempt))."""
    base = settings.WEBUI.get("VESSEL_RETRY_BASE_DELAY", 0.5)
    cap = settings.WEBUI.get("VESSEL_RETRY_MAX_DELAY", 8.0)
    return random.uniform(0, min(cap, base * 2**attempt))


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
        attempt = 0
        while True:
            try:
                return self.post_once(request, deadline_at=deadline_at)
            except VesselError as error:
                if not error.retryable or attempt >= self.vessel.max_retries:
                    raise
                delay = (
                    error.retry_after if error.retry_after is not None else backoff_delay(attempt)
                )
                if time.monotonic() + delay >= deadline_at:
                    raise
                logger.info(
                    "Vessel %s: %s, retry %d in %.2f s",
                    self.vessel.slug,
                    error.code,
                    attempt + 1,
                    delay,
                )
                sleep(delay)
                attempt += 1

    def post_once(self, request: dict[str, Any], *, deadline_at: float) -> Any:
        """One POST with the connect and read timeouts, the total deadline and the size cap."""
        remaining = deadline_at - time.monotonic()
        if remaining <= 0:
            raise self.timeout_error()
        url = self.endpoint(request)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **self.headers(),
        }
        try:
            response = SESSION.post(
                url,
                data=canonical_bytes(self.wire_body(request)),
                headers=headers,
                timeout=(
                    min(self.vessel.connect_timeout, remaining),
                    min(self.vessel.read_timeout, remaining),
                ),
                stream=True,
                allow_redirects=False,
            )
            try:
                raw = read_body(response, deadline_at=deadline_at, max_bytes=MAX_RESPONSE_BYTES)
            finally:
                response.close()
        except BodyTooLarge as exc:
            raise VesselError(
                f"{self.provider_name} sent too large an answer ({exc}); refused.",
                code="response_too_large",
            ) from exc
        except (DeadlineExceeded, requests.Timeout, urllib3.exceptions.ReadTimeoutError) as exc:
            raise self.timeout_error() from exc
        except (requests.ConnectionError, urllib3.exceptions.ProtocolError) as exc:
            raise VesselError(
                f"{self.provider_name} at {self.base_url} could not be reached ({type(exc).__name__}).",
                code="connection_failed",
                retryable=True,
            ) from exc
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            # Only the exception's type: its text can quote a header value, and so the API key.
            raise VesselError(
                f"The request to {self.provider_name} could not be made ({type(exc).__name__}); "
                "check the vessel's base URL and key.",
                code="request_failed",
            ) from None
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if response.status_code >= 300:
            message, provider_code = self.error_message(body) if body is not None else (None, None)
            detail = str(message or "") or body_excerpt(raw) or response.reason
            raise error_for_status(
                status=response.status_code,
                message=f"{self.provider_name} answered HTTP {response.status_code}: {detail}",
                provider_code=provider_code,
                retry_after=retry_after_seconds(response.headers.get("Retry-After")),
            )
        if body is None:
            raise VesselError(
                f"{self.provider_name} answered with a body that is not JSON: "
                f"{body_excerpt(raw)!r}",
                code="bad_response",
                status=response.status_code,
            )
        return body

    def timeout_error(self) -> VesselError:
        return VesselError(
            f"{self.provider_name} did not answer within {self.vessel.deadline:g} seconds.",
            code="timeout",
            retryable=True,
        )
