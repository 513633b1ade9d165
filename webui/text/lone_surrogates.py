"""Lone surrogates: text that JSON can carry (``"\\ud800"``) but that no UTF-8 encoder, database
column or HTTP body can hold.

A decoded answer from outside (an engine's, a provider's) that holds one is unusable as it
stands: storing it, hashing it or sending it on raises ``UnicodeEncodeError`` far from where it
came in. :func:`lone_surrogate_path` finds one at the door so the answer can be refused there,
with a reason; :func:`replace_lone_surrogates` makes text that is only shown (an error message)
safe to show.
"""

import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value: Any, *, where: str = "") -> str | None:
    """Where in ``value`` (a decoded JSON value) a string holds a lone surrogate, or ``None``.

    The place is a slash-separated path of keys and indexes ("items/0/text"; "the answer" for
    the value itself); keys are checked as well as values.
    """
    if isinstance(value, str):
        return (where or "the answer") if LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            inner_where = f"{where}/{key}" if where else str(key)
            if isinstance(key, str) and LONE_SURROGATE.search(key):
                return replace_lone_surrogates(inner_where)
            found = lone_surrogate_path(inner, where=inner_where)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            found = lone_surrogate_path(inner, where=f"{where}/{index}" if where else str(index))
            if found:
                return found
    return None


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character."""
    return LONE_SURROGATE.sub("\ufffd", text)
