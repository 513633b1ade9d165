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
