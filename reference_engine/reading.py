"""What a request carries, read and checked before any route sees it: the path, the query and
the JSON body, each refused with a 4xx in the contract's shape when it cannot be used.

- The URL (path and query) is at most :data:`MAX_URL_BYTES` (``414 uri_too_long``; gunicorn
  itself refuses a request line over 4094 bytes before the engine sees it).
- The body is at most :data:`MAX_BODY_BYTES`: a larger ``Content-Length`` is ``413
  body_too_large`` before a byte of it is read (a chunked body is read to the cap plus one
  byte, no further); gunicorn discards the unread rest, within its own deadline.
- The path, every query value and every string in the body (keys too) must be UTF-8 text
  without NUL or lone surrogates (``\\ud800`` is valid JSON, but no database or encoder can
  keep it), and the body JSON nested at most :data:`MAX_DEPTH` deep: ``400``, naming the
  field.
"""

import json
from typing import Any
from urllib.parse import parse_qsl, quote

from reference_engine.wire import Refusal, invalid

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body taken (1 MiB): a turn event's message is at most 20,000 characters."""
MAX_URL_BYTES = 2048
"""The longest path and query string taken together, in bytes as sent (percent escapes too)."""
MAX_DEPTH = 32
"""The deepest a body's JSON may nest (objects and arrays)."""
MAX_QUERY_FIELDS = 20
QUERY_SAFE = "".join(chr(c) for c in range(33, 127))
"""Every printable ASCII character: escapes (``%``) and separators stay as they were sent."""
MAX_FIELD_NAME = 100
"""Field names in ``details`` are cut to this many characters."""


def raw_path(environ: dict[str, Any]) -> bytes:
    """The path as the server decoded its percent escapes, as bytes (WSGI's latin-1 str)."""
    return environ.get("PATH_INFO", "").encode("latin-1", "replace")


def printable_path(environ: dict[str, Any]) -> str:
    """The path for a log line: percent-escaped, so no byte of it can break the line."""
    return quote(raw_path(environ), safe="/:@!$&'()*+,;=-._~")


def request_path(environ: dict[str, Any]) -> str:
    """The request's path as text; 414 for a URL over the cap, 400 for one that is not UTF-8
    text or holds a NUL."""
    sent = environ.get("RAW_URI") or printable_path(environ) + "?" + environ.get("QUERY_STRING", "")
    if len(sent.encode("latin-1", "replace")) > MAX_URL_BYTES:
        message = f"The URL is longer than {MAX_URL_BYTES} bytes."
        raise Refusal(414, "uri_too_long", message)
    try:
        path = raw_path(environ).decode("utf-8")
    except UnicodeDecodeError:
        raise invalid("path", "must be UTF-8 text") from None
    if "\x00" in path:
        raise invalid("path", "must not hold a NUL character")
    return path


def request_query(environ: dict[str, Any]) -> dict[str, list[str]]:
    """The query string's values by name, each UTF-8 text without NUL."""
    # Raw bytes past ASCII (a client that did not escape them) are escaped, so that every
    # value is decoded once, as UTF-8, strictly.
    sent = quote(environ.get("QUERY_STRING", "").encode("latin-1", "replace"), safe=QUERY_SAFE)
    if sent.count("&") + sent.count(";") >= MAX_QUERY_FIELDS:
        raise invalid("query", f"must have at most {MAX_QUERY_FIELDS} parameters")
    try:
        pairs = parse_qsl(sent, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise invalid("query", "must be UTF-8 text") from None
    query: dict[str, list[str]] = {}
    for name, value in pairs:
        if "\x00" in name:
            raise invalid("query", "must not hold a NUL character")
        if "\x00" in value:
            raise invalid(field_name(name), "must not hold a NUL character")
        query.setdefault(name, []).append(value)
    return query


def declared_length(environ: dict[str, Any]) -> int | None:
    """The body's declared ``Content-Length`` (None: not given); 400 when it is not a number."""
    given = environ.get("CONTENT_LENGTH") or ""
    if not given:
        return None
    if not (given.isascii() and given.isdigit()):
        raise Refusal(400, "invalid_request", "Content-Length must be a number of bytes.")
    return int(given)


def body_too_large() -> Refusal:
    message = f"The body is larger than {MAX_BODY_BYTES} bytes."
    return Refusal(413, "body_too_large", message)


def read_body(environ: dict[str, Any]) -> bytes:
    """The body's bytes; 413 (before reading any) when it is declared larger than the cap."""
    length = declared_length(environ)
    if length is not None and length > MAX_BODY_BYTES:
        raise body_too_large()
    stream = environ["wsgi.input"]
    if length is not None:
        raw = stream.read(length) if length else b""
    elif "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        raw = stream.read(MAX_BODY_BYTES + 1)
    else:
        raw = b""
    if len(raw) > MAX_BODY_BYTES:
        raise body_too_large()
    return raw


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decoded_json(raw: bytes) -> Any:
    """The body as JSON (None when empty); 400 when it is not UTF-8 JSON, or nests too deep."""
    if not raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(400, "invalid_json", "The body is not UTF-8 text.") from None
    try:
        value = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise too_deep() from None
    except ValueError:
        raise Refusal(400, "invalid_json", "The body is not JSON.") from None
    check_text(value)
    return value


def too_deep() -> Refusal:
    return Refusal(400, "too_deep", f"The body nests deeper than {MAX_DEPTH} levels.")


def field_name(path: list[str | int] | str) -> str:
    """A field's name for ``details``: dotted, with list positions, cut to a sane length."""
    name = path if isinstance(path, str) else ".".join(str(part) for part in path) or "body"
    return name if len(name) <= MAX_FIELD_NAME else name[: MAX_FIELD_NAME - 1] + "…"


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be kept: a NUL, or a lone surrogate; None when it can."""
    if "\x00" in text:
        return "must not hold a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must not hold a lone surrogate (text that is not valid Unicode)"
    return None


def check_text(value: Any) -> None:
    """400 for the first string (value or key) that cannot be kept, or for nesting too deep."""
    stack: list[tuple[list[str | int], Any, int]] = [([], value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                raise invalid(field_name(path), problem)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise too_deep()
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, inner in pairs:
                if isinstance(key, str) and (problem := text_problem(key)):
                    raise invalid(field_name(path) + " (a field name)", problem)
                stack.append(([*path, key], inner, depth + 1))
