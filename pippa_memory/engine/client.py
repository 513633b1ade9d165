"""The one client for the memory engine.

The wire is the host's :mod:`webui.outbound_http` (a session for the ``memory-engine`` role, connect
and read timeouts, a total deadline so a dripping engine is cut off, a response-size cap, redirects
never followed). What is the engine's own lives here: a bearer token, the contract version
(``X-Memory-Contract``) and an ``X-Request-Id`` on every call, every response's JSON shape validated,
and one process-wide circuit breaker (pybreaker) that makes calls cost nothing after repeated
failures until its reset time. It never raises: a
call that did not work returns an :class:`EngineOutcome` whose ``reason`` says why, which is what
the chat paths need to stay absent-tolerant.
"""

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pybreaker

from pippa_memory.conf import memory_settings
from pippa_memory.engine.contract import CONTRACT_HEADER, unusable_text_problem
from webui import outbound_http
from webui.text.canonical import canonical_bytes
from webui.text.redaction import fit_to_show

logger = logging.getLogger(__name__)

#: The engine is a sibling service that takes its own token: no proxy or ``~/.netrc`` login from the
#: environment (:class:`~webui.outbound_http.OutgoingSession`).
SESSION = outbound_http.OutgoingSession(role="memory-engine", from_environment=False)


class EngineFailure(Exception):
    """A call that counts against the breaker: no response, a 5xx, or a response we cannot use.

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
class EngineOutcome:
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
    def absent(cls, reason: str, detail: str, **fields: Any) -> "EngineOutcome":
        return cls(ok=False, reason=reason, detail=detail, **fields)


class ConcurrentBreaker(pybreaker.CircuitBreaker):
    """pybreaker's breaker, without holding its lock for the whole guarded call.

    ``pybreaker.CircuitBreaker.call`` keeps the breaker's one lock while the call runs, so every
    engine call of a process waits for the one before it: a web process's threads, and the
    outbox worker's delivery threads, would reach the engine one at a time. Here the state's own
    rules run unlocked (its changes, ``open``, ``half_open`` and ``close``, still take the lock);
    the cost is that while half-open, calls that start together may each be the trial call.
    """

    def call(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        return self.state.call(func, *args, **kwargs)


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
            self._breaker = ConcurrentBreaker(
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


def call_engine(
    method: str,
    path: str,
    *,
    budget: float,
    body: Any = None,
    schema: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    read_timeout: float | None = None,
) -> EngineOutcome:
    """Call the engine at ``path`` and return what happened; never raises.

    ``budget`` is the seconds left in the caller's own budget (:mod:`pippa_memory.engine.budget`):
    the whole call, connect and every read, is over by then, and there is no default, so no
    caller inherits another's. ``read_timeout`` caps each read further (the chat turn's
    ``READ_TIMEOUT``); omitted, a read may wait for what is left of the budget, never longer.
    ``schema`` validates a 2xx response's JSON (a 2xx without a schema may have any JSON body, but
    never one holding a lone surrogate: reason ``unencodable_text``). A 4xx is returned as an
    absent outcome with its status and does not count against the breaker; failures (no response,
    5xx, unusable response) do.
    """
    request_id = uuid.uuid4().hex
    refusal = _not_callable(request_id)
    if refusal is not None:
        return refusal
    seconds = max(0.0, budget)
    reading = seconds if read_timeout is None else min(read_timeout, seconds)
    started = time.monotonic()
    try:
        response, data = BREAKER.get().call(
            _exchange,
            method,
            f"{memory_settings.URL.rstrip('/')}{path}",
            body=body,
            schema=schema,
            deadline_at=started + seconds,
            request_id=request_id,
            extra_headers=headers or {},
            read_timeout=reading,
        )
    except pybreaker.CircuitBreakerError:
        return EngineOutcome.absent(
            "breaker_open",
            "The engine failed repeatedly; calls are paused until the breaker's reset time.",
            request_id=request_id,
        )
    except EngineFailure as failure:
        # The path only: a query string may hold a member's words (a search's ``q``).
        return _absent_after(
            failure, call=f"{method} {path.split('?')[0]}", started=started, request_id=request_id
        )
    return _outcome_of(
        response, data, latency_ms=_milliseconds_since(started), request_id=request_id
    )


def call_in_turn(
    method: str,
    path: str,
    *,
    budget: float,
    body: Any = None,
    schema: dict[str, Any] | None = None,
) -> EngineOutcome:
    """A chat turn's engine call (the pin, the answers fetch, their ack): :func:`call_engine`
    with each read capped at ``READ_TIMEOUT``, so one slow read leaves time for the next call."""
    return call_engine(
        method,
        path,
        body=body,
        schema=schema,
        budget=budget,
        read_timeout=memory_settings.READ_TIMEOUT,
    )


def _not_callable(request_id: str) -> EngineOutcome | None:
    """The absent outcome for a call that must not be made at all (memory off, no engine URL)."""
    if not memory_settings.ENABLED:
        return EngineOutcome.absent(
            "memory_disabled", "Memory is switched off.", request_id=request_id
        )
    if not memory_settings.URL.rstrip("/"):
        return EngineOutcome.absent(
            "engine_unconfigured", "PIPPA_MEMORY_URL is not set.", request_id=request_id
        )
    return None


def _absent_after(
    failure: EngineFailure, *, call: str, started: float, request_id: str
) -> EngineOutcome:
    """The absent outcome for a ``failure`` (one the breaker counted), logged with the request id."""
    logger.warning(
        "Memory engine %s failed (%s): %s [request %s]",
        call,
        failure.reason,
        failure.detail,
        request_id,
    )
    return EngineOutcome.absent(
        failure.reason,
        failure.detail,
        status=failure.status,
        latency_ms=_milliseconds_since(started),
        request_id=request_id,
    )


def _milliseconds_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _outcome_of(
    response: outbound_http.ReadResponse, data: Any, *, latency_ms: int, request_id: str
) -> EngineOutcome:
    """A 2xx as an ``ok`` outcome with its data; a 4xx as absent (``http_<status>``), data kept."""
    if response.status >= 400:
        return EngineOutcome.absent(
            f"http_{response.status}",
            f"The engine answered HTTP {response.status}.",
            status=response.status,
            data=data,
            retry_after=outbound_http.retry_after_seconds(response.headers.get("Retry-After")),
            latency_ms=latency_ms,
            request_id=request_id,
        )
    return EngineOutcome(
        ok=True,
        status=response.status,
        data=data,
        latency_ms=latency_ms,
        request_id=request_id,
        headers=dict(response.headers),
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
    read_timeout: float,
) -> tuple[outbound_http.ReadResponse, Any]:
    """One HTTP exchange and its usable JSON; raises :class:`EngineFailure` for any failure."""
    version_header, version = CONTRACT_HEADER
    headers = {
        "Accept": "application/json",
        "X-Request-Id": request_id,
        version_header: version,
        **extra_headers,
    }
    if memory_settings.TOKEN:
        headers["Authorization"] = f"Bearer {memory_settings.TOKEN}"
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        response = outbound_http.exchange(
            SESSION,
            method,
            url,
            data=canonical_bytes(body) if body is not None else None,
            headers=headers,
            connect_timeout=memory_settings.CONNECT_TIMEOUT,
            read_timeout=read_timeout,
            deadline_at=deadline_at,
            max_bytes=memory_settings.MAX_RESPONSE_BYTES,
        )
    except outbound_http.RequestNotMade as failure:
        # Only the exception's type: its text can quote a header value, and so the token.
        raise EngineFailure(
            "request_failed", f"The call to the engine could not be made ({failure})."
        ) from None
    except outbound_http.OutgoingFailure as failure:
        raise _transport_failure(failure) from failure
    return response, _usable_data(response, schema=schema)


def _transport_failure(failure: outbound_http.OutgoingFailure) -> EngineFailure:
    """Our failure for a response that never (fully) came: too large, too late, or unreachable."""
    if isinstance(failure, outbound_http.BodyTooLarge):
        return EngineFailure("too_large", f"The engine's answer was refused: {failure}.")
    if isinstance(failure, outbound_http.NoTimeLeft):
        return EngineFailure("timeout", "No time was left in the budget for the call.")
    if isinstance(failure, outbound_http.DeadlineExceeded):
        return EngineFailure("timeout", "The engine did not answer within the budget.")
    return EngineFailure("connection_failed", f"The engine could not be reached ({failure}).")


def wrong_shape_detail(error: jsonschema.ValidationError) -> str:
    """Where a response broke the schema and which rule it broke (the validator's name, such as
    ``type`` or ``required``), never the value it held."""
    where = "/".join(str(p) for p in error.absolute_path) or "the answer"
    return f"The engine's answer has the wrong shape at {where} (rule: {error.validator})."


def _usable_data(response: outbound_http.ReadResponse, *, schema: dict[str, Any] | None) -> Any:
    """The response's JSON, checked; :class:`EngineFailure` for a 3xx, a 5xx or an unusable 2xx.

    A 4xx is not a failure: its body is kept when it is usable JSON and dropped (``None``) when not.
    """
    status = response.status
    if status >= 500:
        raise EngineFailure("http_error", f"The engine answered HTTP {status}.", status=status)
    if 300 <= status < 400:
        # Redirects are never followed; a moved engine is a misconfiguration, not a refusal.
        raise EngineFailure("redirect", f"The engine answered HTTP {status}.", status=status)
    try:
        parsed = json.loads(response.body) if response.body else None
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
            # Only where and which rule: jsonschema's message quotes the bad value, which may be
            # a memory's text, and this detail reaches logs, pages, the API and tool output.
            raise EngineFailure("wrong_shape", wrong_shape_detail(exc)) from None
    return parsed
