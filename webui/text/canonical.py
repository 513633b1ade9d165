"""One way to turn JSON into text, used everywhere bytes must not move between turns."""

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` with sorted keys, real Unicode and compact separators.

    Tool inputs and outputs that end up inside a prompt, and whole request bodies, go through here so
    that the same value always gives the same bytes.
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_bytes(value: Any) -> bytes:
    """:func:`canonical_json` encoded as UTF-8, ready to send."""
    return canonical_json(value).encode("utf-8")


def json_roundtrip(value: Any) -> Any:
    """``value`` as it will read back from a JSON column, so a prompt built now and one rebuilt
    from the database later render the same bytes.

    Keys become strings (and so sort as strings), tuples become lists, integral floats too large
    for Python to print without an exponent become ints, as PostgreSQL's ``jsonb`` returns them,
    and NUL characters, which no PostgreSQL text can hold, are dropped.
    """

    def settle(item: Any) -> Any:
        if isinstance(item, str):
            return without_nul(item)
        if isinstance(item, float) and item.is_integer() and abs(item) >= 1e16:
            return int(item)
        if isinstance(item, dict):
            return {without_nul(key): settle(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [settle(inner) for inner in item]
        return item

    return settle(json.loads(canonical_json(value)))


def without_nul(text: str) -> str:
    """``text`` without NUL characters: untrusted text (an engine's, a model's) may carry them,
    and PostgreSQL refuses them in text and ``jsonb`` columns."""
    return text.replace("\x00", "")
