"""Listing cursors as a member holds them: the engine's own, signed by this site.

A listing's ``next`` is the engine's opaque cursor. Passed on as the member sent it back, any
string would reach the engine, and one it cannot read (a number past its integer range, say) could
make it fail: a failure the breaker counts against everyone's memory. So the member is handed the
engine's cursor signed (Django's signing, under ``SECRET_KEY`` with a salt of its own) together
with the soul and the member it was given for, and only a cursor that comes back intact, for the
same soul and member, is passed on. Anything else is :class:`BadCursor`, refused before any call.
"""

from django.core import signing

SALT = "pippa_memory.items.cursor"


class BadCursor(ValueError):
    """A cursor this site did not hand to this member for this soul."""


def handed_out(engine_cursor: str | None, *, soul: str, viewer: str) -> str | None:
    """The member's copy of ``engine_cursor`` (None stays None: the last page)."""
    if engine_cursor is None:
        return None
    return signing.Signer(salt=SALT).sign_object({"c": engine_cursor, "s": soul, "v": viewer})


def taken_back(cursor: str, *, soul: str, viewer: str) -> str:
    """The engine's cursor inside ``cursor``, a copy this site handed to ``viewer`` for ``soul``;
    :class:`BadCursor` for anything else."""
    try:
        held = signing.Signer(salt=SALT).unsign_object(cursor)
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise BadCursor("not a cursor this site gave") from exc
    if not isinstance(held, dict) or (held.get("s"), held.get("v")) != (soul, viewer):
        raise BadCursor("a cursor given for another listing")
    if not isinstance(held.get("c"), str):
        raise BadCursor("not a cursor this site gave")
    return held["c"]
