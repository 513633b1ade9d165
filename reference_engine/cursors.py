"""Names a caller hands back to the engine: revision names and listing cursors, checked."""

from reference_engine.souls import UnknownRevision
from reference_engine.storage.revisions import revision_number

LARGEST_NUMBER = 2**63 - 1
"""The largest counter either database keeps (a signed 64-bit integer)."""


class BadCursor(ValueError):
    """A listing cursor this engine did not hand out."""


def known_number(revision: str) -> int:
    """The counter a revision name stands for; :class:`UnknownRevision` for a name no counter
    reaches (past 64 bits), which the database could not even be asked about."""
    if not revision.isascii():
        raise UnknownRevision(revision)
    number = revision_number(revision)
    if number > LARGEST_NUMBER:
        raise UnknownRevision(revision)
    return number


def cursor_position(cursor: str) -> int | None:
    """The sequence number a listing cursor points before (no cursor: None, the newest)."""
    if not cursor:
        return None
    prefix, _, number = cursor.partition("-")
    if prefix != "before" or not (number.isascii() and number.isdigit()):
        raise BadCursor("cursor is not one this engine gave")
    if int(number) > LARGEST_NUMBER:
        raise BadCursor("cursor is not one this engine gave")
    return int(number)
