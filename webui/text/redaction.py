"""Secrets masked out of text that is shown to people or written to the log.

A provider's or an engine's error text may quote what it was sent: an API key, a bearer token, a
signing secret. :func:`mask_secrets` replaces them with :data:`MASK` before such text reaches a
member, an API body or a log record. Two kinds of secret are masked:

- known values: each value a registered source returns. The host's own source reads the
  environment: every variable whose name has KEY, TOKEN, SECRET or PASSWORD in it, which covers
  every vessel's key (a vessel's key variable must be named so), set or not yet used. A plug-in
  registers its own in its ``AppConfig.ready()`` with :func:`register_secret_source`, so the host
  never needs to import it;
- known shapes, whatever their value: ``Bearer <token>``, OpenAI-style ``sk-...`` keys and
  ``whsec_...`` signing secrets.

:func:`install_log_masking` makes every log record masked when it is made, so every handler (the
console, a test's capture, a third-party one) sees the same masked text, traceback included; a log
record also loses every URL query string (:func:`without_queries`), which may carry what a member
typed.
"""

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from webui.text.lone_surrogates import replace_lone_surrogates

MASK = "[redacted]"
# Shorter values are not masked by value: masking "abc" everywhere would garble ordinary text.
MIN_SECRET_CHARS = 12
# A bearer token: one that holds a digit or a symbol, or 20 letters, so "bearer token" stays prose.
BEARER = re.compile(
    r"\b(Bearer)\s+(?=[A-Za-z.]*[0-9_~+/=\-]|[A-Za-z]{20})[A-Za-z0-9._~+/=\-]*[A-Za-z0-9_~+/=\-]",
    re.IGNORECASE,
)
SECRET_SHAPES = re.compile(r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_\-]{8,}|whsec_[A-Za-z0-9+/=_\-]{8,})")
# Wider than the rule for a vessel's key variable (KEY or TOKEN in its name), so it covers them all.
SECRET_ENV_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)

# A URL's query string (``?name=value&...``): it may carry what a member typed (a search of the
# memory page reaches the engine as ``?q=...``), so no log line keeps one.
URL_QUERY = re.compile(r"\?[^\s=&?#'\"<>]*=[^\s#'\"<>]*")
QUERY_MASK = "?[query redacted]"

SecretSource = Callable[[], Iterable[str]]

_SOURCES: list[SecretSource] = []
_LOCK = threading.Lock()


def register_secret_source(source: SecretSource) -> None:
    """Have ``source()``'s values masked from now on; it is asked again at every masking, so it
    may return values that change (settings, rotations). Registering the same source twice is a
    no-op."""
    with _LOCK:
        if source not in _SOURCES:
            _SOURCES.append(source)


def unregister_secret_source(source: SecretSource) -> None:
    """Stop asking ``source`` (tests, a plug-in switched off); unknown sources are ignored."""
    with _LOCK:
        if source in _SOURCES:
            _SOURCES.remove(source)


def secret_environment_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``...): every vessel's key is one."""
    return [value for name, value in os.environ.items() if SECRET_ENV_NAME.search(name)]


def known_secret_values() -> list[str]:
    """Every value to mask now, longest first (so a value that holds another is masked whole)."""
    with _LOCK:
        sources = list(_SOURCES)
    values: set[str] = set()
    for source in (secret_environment_values, *sources):
        for value in source():
            for part in str(value or "").split():
                if len(part) >= MIN_SECRET_CHARS:
                    values.add(part)
    return sorted(values, key=len, reverse=True)


def mask_secrets(text: str) -> str:
    """``text`` with every known secret value and every secret-shaped string replaced by MASK."""
    if not text:
        return text
    for value in known_secret_values():
        if value in text:
            text = text.replace(value, MASK)
    text = BEARER.sub(rf"\1 {MASK}", text)
    return SECRET_SHAPES.sub(MASK, text)


def fit_to_show(text: str) -> str:
    """Outside text (a provider's, an engine's) fit to show or log: secrets masked, and lone
    surrogates, which no page, API body or log stream can encode, replaced by U+FFFD."""
    return mask_secrets(replace_lone_surrogates(text))


def without_queries(text: str) -> str:
    """``text`` with each URL query string (``?name=value&...``) replaced by
    :data:`QUERY_MASK`: what a member searched for never reaches a log."""
    return URL_QUERY.sub(QUERY_MASK, text) if text and "?" in text else text


def fit_to_log(text: str) -> str:
    """:func:`fit_to_show`, and no URL query string (:func:`without_queries`)."""
    return without_queries(fit_to_show(text))


def mask_log_record(record: logging.LogRecord) -> None:
    """Make ``record``'s message, traceback and stack text :func:`fit_to_log`, in place.

    The message is formatted here (its arguments may carry the secret), and the traceback is
    formatted and masked into ``exc_text``, which formatters use instead of formatting it again.
    """
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a bad format string is reported by the handler, as usual
        return
    record.msg, record.args = fit_to_log(message), ()
    if record.exc_info and not record.exc_text:
        record.exc_text = fit_to_log(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = fit_to_log(record.stack_info)


def install_log_masking() -> None:
    """Make every log record masked when it is made (idempotent).

    A record factory rather than a handler filter: filters belong to one handler, and a record
    reaches several (the console, a test's log capture, an error reporter) that must all see
    the masked text.
    """
    current = logging.getLogRecordFactory()
    if getattr(current, "masks_secrets", False):
        return

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        mask_log_record(record)
        return record

    masked_record.masks_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masked_record)
