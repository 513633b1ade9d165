"""Reading JSON that arrives from outside (the chat API, the brain door): strict, depth-bounded,
and holding only text that can be stored.

Python's parser accepts more than a column can keep or the code behind it can walk: ``"\\ud800"``
is valid JSON but a lone surrogate, which is no Unicode scalar value and cannot be encoded as
UTF-8; ``NaN`` and ``Infinity`` are not JSON at all; and nesting thousands deep exhausts the
parser's recursion (``RecursionError``). Every inbound route parses through
:func:`parse_untrusted_json`, which refuses each of these with an error that says where.
"""

import json
from typing import Any

# Deeper than any body the API or the brain door documents (the deepest is four), and shallow
# enough that nothing that walks a value recursively comes near Python's recursion limit.
MAX_JSON_DEPTH = 32


class UntrustedJSONError(ValueError):
    """The body is not JSON this project accepts: malformed, a non-JSON constant, or too deep."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnstorableText(UntrustedJSONError):
    """A string (or key) in the body cannot be encoded as UTF-8; ``field`` is its dotted path."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape, so it can be shown in an answer."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse_constant(name: str) -> Any:
    raise UntrustedJSONError(f"The body is not valid JSON: {name} is not a JSON value.")


def parse_untrusted_json(
    raw: bytes | str, *, encoding: str = "utf-8", max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """The value in ``raw``, or :class:`UntrustedJSONError` (:class:`UnstorableText` naming the
    field when the JSON is fine but holds text no column can store).

    Never raises anything else, ``RecursionError`` included, whatever ``raw`` holds.
    """
    try:
        text = raw if isinstance(raw, str) else raw.decode(encoding)
    except LookupError as exc:
        raise UntrustedJSONError(f"The charset {encoding!r} is not one this API reads.") from exc
    except UnicodeDecodeError as exc:
        raise UntrustedJSONError(f"The body is not valid {encoding} text.") from exc
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as exc:
        raise UntrustedJSONError(too_deep_message(max_depth, "")) from exc
    except json.JSONDecodeError as exc:
        raise UntrustedJSONError(f"The body is not valid JSON: {exc.msg}.") from exc
    except UntrustedJSONError:
        raise
    except ValueError as exc:  # an integer too long to read, say
        raise UntrustedJSONError(f"The body is not valid JSON: {exc}.") from exc
    check_untrusted_value(value, max_depth=max_depth)
    return value


def too_deep_message(max_depth: int, where: str) -> str:
    at = f" (at {where})" if where else ""
    return f"The body is nested more than {max_depth} levels deep{at}."


def check_untrusted_value(value: Any, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise if ``value`` (parsed JSON) nests deeper than ``max_depth`` or holds a string or key
    that cannot be encoded as UTF-8; the error names the first such place in document order.

    Walks with its own stack, so a deep value cannot exhaust Python's.
    """
    pending: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            refuse_unencodable(item, path)
            continue
        if not isinstance(item, dict | list):
            continue
        if len(path) >= max_depth:
            raise UntrustedJSONError(too_deep_message(max_depth, dotted(path)))
        if isinstance(item, dict):
            for key in item:
                refuse_unencodable(key, (*path, key))
            children = [(inner, (*path, key)) for key, inner in item.items()]
        else:
            children = [(inner, (*path, str(index))) for index, inner in enumerate(item)]
        pending.extend(reversed(children))


def refuse_unencodable(text: str, path: tuple[str, ...]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = dotted(path)
        surrogate = f"U+{ord(text[exc.start]):04X}"
        raise UnstorableText(
            f"Must be valid Unicode text: it holds a lone surrogate ({surrogate}), which cannot "
            "be encoded as UTF-8.",
            field=where,
        ) from None


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(printable(part) for part in path) or "body"
