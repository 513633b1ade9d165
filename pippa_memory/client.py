"""The one client for the memory engine.

Every call has a connect and a read timeout, a total deadline (a dripping engine is cut off), a
response-size cap, a bearer token and an ``X-Request-Id``; every answer's JSON shape is validated;
and one process-wide circuit breaker (pybreaker) makes calls cost nothing after repeated failures
until its reset time. It never raises: a call that did not work returns an :class:`EngineAnswer`
whose ``reason`` says why, which is what the chat paths need to stay absent-tolerant.
"""

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pybreaker
import requests
import urllib3

from pippa_memory.conf import memory_settings
from pippa_memory.contract import unusable_text_problem
from webui.canonical import canonical_bytes
from webui.outbound_http import BodyTooLarge, DeadlineExceeded, read_body
from webui.redaction import fit_to_show

logger = logging.getLogger(__name__)

SESSION = requests.Session()
SESSION.mount("http://", requests.adapters.HTTPAdapter(max_retries=0))
SESSION.mount("https://", requests.adapters.HTTPAdapter(max_retries=0))


class EngineFailure(Exception):
    """A call that counts against the breaker: no answer, a 5xx, or an answer we cannot use.

    ``detail`` may quote the engine (a schema message quotes the value it refused), so it is
    made fit to show (secrets masked) before anyone can show or log it.
    """

    def __init__(self, reason: str, detail: str, *, status: int | None = None) -> None:
        detail = fit_to_show(detail)
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.status = status


@dataclass(frozen=True)
class EngineAnswer:
    """The outcome of one engine call. ``ok`` with ``data``, or absent with a ``reason``."""

    ok: bool
    reason: str = ""
    detail: str = ""
    status: int | None = None
    data: Any = None
    retry_after: float | None = None
    latency_ms: int | None = None
    request_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def absent(cls, reason: str, detail: str, **fields: Any) -> "EngineAnswer":
        return cls(ok=False, reason=reason, detail=detail, **fields)


class _Breaker:
    """The process-wide breaker, rebuilt when its settings change (tests change them)."""

    def __init__(self) -> None:
        self._breaker: pybreaker.CircuitBreaker | None = None
        self._config: tuple[int, float] | None = None

    def get(self) -> pybreaker.CircuitBreaker:
        config = (
            memory_settings.BREAKER_FAIL_MAX,
            memory_settings.BREAKER_RESET_TIMEOUT,
            memory_settings.BREAKER_REDIS_URL,
        )
        if self._breaker is None or config != self._config:
            storage = None
            if config[2]:
                # Shared by every process and host that uses the same Redis: one engine, one view.
                import redis

                storage = pybreaker.CircuitRedisStorage(
                    pybreaker.STATE_CLOSED,
                    redis.Redis.from_url(config[2]),
                    namespace="pippa-memory-engine",
                )
            self._breaker = pybreaker.CircuitBreaker(
                fail_max=config[0],
                reset_timeout=config[1],
                name="memory-engine",
                throw_new_error_on_trip=False,
                state_storage=storage,
            )
            self._config = config
        return self._breaker

    def reset(self) -> None:
        """Close the breaker and forget failures (tests, and an admin who fixed the engine)."""
        self._breaker = None


BREAKER = _Breaker()


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def call_engine(
    method: str,
    path: str,
    *,
    body: Any = None,
    schema: dict[str, Any] | None = None,
    budget: float | None = None,
    headers: dict[str, str] | None = None,
) -> EngineAnswer:
    """Call the engine at ``path`` and return what happened; never raises.

    ``schema`` validates a 2xx answer's JSON (a 2xx without a schema may have any JSON body, but
    never one holding a lone surrogate: reason ``unencodable_text``); ``budget``
    is the total seconds the call may take (the chat budget when omitted). A 4xx is returned as
    an absent answer with its status and does not count against the breaker; failures (no answer,
    5xx, unusable answer) do.
    """
    request_id = uuid.uuid4().hex
    if not memory_settings.ENABLED:
        return EngineAnswer.absent(
            "memory_disabled", "Memory is switched off.", request_id=request_id
        )
    base = memory_settings.URL.rstrip("/")
    if not base:
        return EngineAnswer.absent(
            "engine_unconfigured", "PIPPA_MEMORY_URL is not set.", request_id=request_id
        )
    seconds = budget if budget is not None else memory_settings.CHAT_BUDGET
    started = time.monotonic()
    try:
        status, data, response_headers = BREAKER.get().call(
            _exchange,
            method,
            f"{base}{path}",
            body=body,
            schema=schema,
            deadline_at=started + seconds,
            request_id=request_id,
            extra_headers=headers or {},
        )
    except pybreaker.CircuitBreakerError:
        return EngineAnswer.absent(
            "breaker_open",
            "The engine failed repeatedly; calls are paused until the breaker's reset time.",
            request_id=request_id,
        )
    except EngineFailure as failure:
        latency = int((time.monotonic() - started) * 1000)
        logger.warning(
            "Memory engine %s %s failed (%s): %s [request %s]",
            method,
            path,
            failure.reason,
            failure.detail,
            request_id,
        )
        return EngineAnswer.absent(
            failure.reason,
            failure.detail,
            status=failure.status,
            latency_ms=latency,
            request_id=request_id,
        )
    latency = int((time.monotonic() - started) * 1000)
    if status >= 400:
        return EngineAnswer.absent(
            f"http_{status}",
            f"The engine answered HTTP {status}.",
            status=status,
            data=data,
            retry_after=_retry_after(response_headers.get("Retry-After")),
            latency_ms=latency,
            request_id=request_id,
        )
    return EngineAnswer(
        ok=True,
        status=status,
        data=data,
        latency_ms=latency,
        request_id=request_id,
        headers=response_headers,
    )


def _exchange(
    method: str,
    url: str,
    *,
    body: Any,
    schema: dict[str, Any] | None,
    deadline_at: float,
    request_id: str,
    extra_headers: dict[str, str],
) -> tuple[int, Any, dict[str, str]]:
    """One HTTP exchange; raises :class:`EngineFailure` for anything that counts as a failure."""
    remaining = deadline_at - time.monotonic()
    if remaining <= 0:
        raise EngineFailure("timeout", "No time was left in the budget for the call.")
    headers = {"Accept": "application/json", "X-Request-Id": request_id, **extra_headers}
    if memory_settings.TOKEN:
        headers["Authorization"] = f"Bearer {memory_settings.TOKEN}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = canonical_bytes(body)
    try:
        response = SESSION.request(
            method,
            url,
            data=data,
            headers=headers,
            timeout=(
                min(memory_settings.CONNECT_TIMEOUT, remaining),
                min(memory_settings.READ_TIMEOUT, remaining),
            ),
            stream=True,
            allow_redirects=False,
        )
        try:
            raw = read_body(
                response, deadline_at=deadline_at, max_bytes=memory_settings.MAX_RESPONSE_BYTES
            )
        finally:
            response.close()
    except BodyTooLarge as exc:
        raise EngineFailure("too_large", f"The engine's answer was refused: {exc}.") from exc
    except (DeadlineExceeded, requests.Timeout, urllib3.exceptions.ReadTimeoutError) as exc:
        raise EngineFailure("timeout", "The engine did not answer within the budget.") from exc
    except (requests.ConnectionError, urllib3.exceptions.ProtocolError) as exc:
        raise EngineFailure(
            "connection_failed", f"The engine could not be reached ({type(exc).__name__})."
        ) from exc
    status = response.status_code
    response_headers = dict(response.headers)
    if status >= 500:
        raise EngineFailure("http_error", f"The engine answered HTTP {status}.", status=status)
    if 300 <= status < 400:
        # Redirects are never followed; a moved engine is a misconfiguration, not a business answer.
        raise EngineFailure("redirect", f"The engine answered HTTP {status}.", status=status)
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError as exc:
        if status < 300:
            raise EngineFailure("invalid_json", "The engine's answer is not JSON.") from exc
        parsed = None
    problem = unusable_text_problem(parsed)
    if problem:
        if status < 300:
            raise EngineFailure("unencodable_text", problem)
        parsed = None  # A 4xx whose body is unusable is still that 4xx, as with a non-JSON one.
    if status < 300 and schema is not None:
        try:
            jsonschema.validate(parsed, schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the answer"
            raise EngineFailure(
                "wrong_shape", f"The engine's answer has the wrong shape at {where}: {exc.message}"
            ) from exc
    return status, parsed, response_headers
