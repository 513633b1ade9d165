"""A stored message rendered and encoded once per adapter, not once per call.

Every call replays the whole history, and a stored message renders to the same provider messages
and the same canonical JSON every time (rows are append-only, and the history a process keeps
holds the same :class:`~webui.prompt_types.HistoryMessage` objects from turn to turn, see
:mod:`webui.prompt.history`). So :meth:`VesselAdapter.render_history` keeps each message's rendering
with the message, as :class:`EncodedMessage` dicts that carry their own bytes, and the two places
that serialise a whole request, the wire body (:func:`request_bytes`) and the cache ledger
(:func:`stable_bytes`), read those bytes instead of encoding the history again. The result is
byte for byte what :func:`~webui.text.canonical.canonical_bytes` gives for the same request
(``tests/webui/vessels/test_encoding.py`` holds that over a long conversation on every adapter), so a
turn's cost stops growing with the conversation's length while its bytes stay put.

An :class:`EncodedMessage` is never changed after it is made: code that needs a different
message builds a new dict (``{**message, ...}``), as the adapters do.
"""

from collections.abc import Mapping
from typing import Any

from webui.text.canonical import canonical_bytes


def without_markers(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with every member named in ``keys`` removed, at any depth."""
    if not keys:
        return value
    if isinstance(value, dict):
        return {k: without_markers(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_markers(v, keys) for v in value]
    return value


class EncodedMessage(dict):
    """A provider message from a stored one, with its canonical JSON (``wire``) and the same
    without the provider's cache markers (``stable``, what the ledger hashes)."""

    __slots__ = ("wire", "stable")

    def __init__(self, message: Mapping[str, Any], *, marker_keys: frozenset[str]) -> None:
        super().__init__(message)
        self.wire = canonical_bytes(message)
        unmarked = without_markers(dict(message), marker_keys)
        self.stable = self.wire if unmarked == message else canonical_bytes(unmarked)


def list_bytes(items: list[bytes] | tuple[bytes, ...]) -> bytes:
    """Canonical JSON of a list whose items are already canonical JSON."""
    return b"[" + b",".join(items) + b"]"


def message_bytes(message: Any) -> bytes:
    """``message`` as canonical JSON: its kept bytes when it has them."""
    return message.wire if isinstance(message, EncodedMessage) else canonical_bytes(message)


def stable_bytes(message: Any, marker_keys: frozenset[str]) -> bytes:
    """``message`` as canonical JSON without the cache markers named by ``marker_keys``."""
    if isinstance(message, EncodedMessage):
        return message.stable
    return canonical_bytes(without_markers(message, marker_keys))


def request_bytes(request: Mapping[str, Any], *, messages_key: str) -> bytes:
    """``canonical_bytes(request)``, with the list at ``messages_key`` joined from each
    message's kept bytes (keys sorted and separators compact, as :func:`canonical_json` does)."""
    members = []
    for key in sorted(request):
        value = request[key]
        if key == messages_key and isinstance(value, list):
            encoded = list_bytes([message_bytes(message) for message in value])
        else:
            encoded = canonical_bytes(value)
        members.append(canonical_bytes(key) + b":" + encoded)
    return b"{" + b",".join(members) + b"}"
