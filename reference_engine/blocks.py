"""The block body of one (revision, viewer): bounded by the budget, chosen once and kept.

A revision made before blocks had a budget (``bounded_from``, :mod:`.storage.blocks`) renders
every visible memory, as it always did, so a block pinned before the upgrade keeps its bytes.
Every later one renders its stored selection; the first ask of a (revision, viewer) chooses it
by the fair rule (:mod:`.selection`) and stores it in a short write of its own, and renders the
items it read to choose unless the head moved meanwhile (every forget and change of scope moves
it: then the held items are read again, so a block is never made with a memory forgotten since).
"""

from typing import Any

from reference_engine.selection import Candidate, render
from reference_engine.souls import UnknownRevision
from reference_engine.storage.blocks import (
    Selection,
    choose_selection,
    head_and_bounded_from,
    held_rows,
    store_selection,
    stored_selection,
)
from reference_engine.storage.database import Database
from reference_engine.storage.revisions import block_at, revision_name


def block_body(
    database: Database, soul: str, revision: int | None, viewer: str | None, *, budget: int
) -> dict[str, Any]:
    """The contract's block body of ``revision`` (the head when None) for ``viewer``, with
    ``left_out``. Raises :class:`~.souls.UnknownRevision` or :class:`~.souls.RevisionGone`."""
    with database.read() as cursor:
        head, bounded_from = head_and_bounded_from(cursor, soul)
        number = head if revision is None else revision
        if number > head:
            raise UnknownRevision(revision_name(number))
        if number < bounded_from:
            ids, text = block_at(cursor, soul, number, viewer)
            return shaped_body(soul, number, viewer, ids, text, left_out=0)
        selection = stored_selection(cursor, soul, number, viewer)
        if selection is not None:
            held = held_rows(cursor, soul, number, viewer, selection)
            return rendered(soul, number, viewer, selection, held)
        selection, chosen = choose_selection(
            cursor, soul, number, viewer, at_head=number == head, budget=budget
        )
    held = chosen if not selection.visible else None  # nothing visible: nothing to keep
    if selection.visible:
        with database.statement() as cursor:
            head_then = store_selection(cursor, soul, number, viewer, selection)
            if head_then is None:
                selection = stored_selection(cursor, soul, number, viewer) or selection
            elif head_then == head:
                held = chosen  # nothing forgotten or rescoped since it was read
    if held is None:
        with database.read() as cursor:
            held = held_rows(cursor, soul, number, viewer, selection)
    return rendered(soul, number, viewer, selection, held)


def rendered(
    soul: str,
    number: int,
    viewer: str | None,
    selection: Selection,
    held: list[tuple[str, Candidate]],
) -> dict[str, Any]:
    text = render([candidate for _, candidate in held], selection.left_out)
    return shaped_body(
        soul, number, viewer, [i for i, _ in held], text, left_out=selection.left_out
    )


def shaped_body(
    soul: str, number: int, viewer: str | None, ids: list[str], text: str, *, left_out: int
) -> dict[str, Any]:
    return {
        "soul": soul,
        "revision": revision_name(number),
        "viewer": viewer,
        "block": text,
        "items": ids,
        "left_out": left_out,
    }
