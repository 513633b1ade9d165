"""A soul's whole memory moved between engines (contract v3): read out in pages, taken in by
batches.

:func:`export_page` answers every memory of a soul (current, and replaced by a newer one),
whoever said it and in whatever scope, oldest first, with its history; it is for the household's admin (through the plug-in's
``manage.py memory_export``), never for a member. :func:`import_batch` takes a batch of items in
one transaction, idempotently by id (:mod:`.storage.portable`), so an import cut off half-way is
finished by running it again, with nothing doubled.
"""

from typing import Any

from reference_engine.state import EngineState, cursor_position, known_number
from reference_engine.storage import portable
from reference_engine.storage.revisions import head_number, revision_name

EXPORT_LIMITS = range(1, 501)
IMPORT_MOST = 500
"""The most items one import batch may carry."""


def export_page(state: EngineState, soul: str, *, after: str, limit: int) -> dict[str, Any]:
    """One page of ``soul``'s live memories after the cursor ``after`` (empty: the first), oldest
    first; ``next`` is the cursor of the page after it (None: this is the last), ``total`` how many
    live memories the soul keeps now. A cursor this engine never gave is a
    :class:`~.state.BadCursor`, a limit outside 1..500 a ValueError."""
    if limit not in EXPORT_LIMITS:
        raise ValueError("limit must be an integer from 1 to 500")
    start = cursor_position(after.replace("after-", "before-", 1)) if after else 0
    with state.database.read() as cursor:
        found = portable.export_page(cursor, soul, after=start or 0, limit=limit + 1)
        row = cursor.run(
            f"SELECT COUNT(*) FROM engine_items WHERE soul = ? AND {portable.EXPORTED}", [soul]
        ).one()
        head = revision_name(head_number(cursor, soul))
    page = found[:limit]
    more = len(found) > limit
    return {
        "soul": soul,
        "items": [{k: v for k, v in item.items() if k != "seq"} for item in page],
        "next": f"after-{page[-1]['seq']}" if more else None,
        "total": int(row[0]) if row else 0,
        "revision": head,
    }


def import_batch(
    state: EngineState,
    soul: str,
    items: list[dict[str, Any]],
    *,
    check_only: bool = False,
    after_revision: str = "",
) -> dict[str, Any]:
    """Take ``items`` into ``soul`` in one transaction: those not kept yet are added at one new
    revision (the head moves forward only when something was added); the answer counts what was
    ``added``, already ``present`` and left ``forgotten``, with the head after it. Raises
    :class:`~.storage.portable.ImportConflict` or :class:`~.souls.NoOwner` with nothing kept.
    ``check_only`` runs the same checks and counts, and keeps nothing (an admin's import checks
    every batch this way before it sends the first for real). ``after_revision`` is the head of
    the engine the items were exported from: what is added lands past it, so a revision handed out
    there (pinned by a conversation) never names another state here."""
    floor = known_number(after_revision) if after_revision else 0
    if len(items) > IMPORT_MOST:
        raise ValueError(f"an import batch carries at most {IMPORT_MOST} items")
    with state.database.write() as cursor:
        done = portable.import_items(cursor, soul, items, write=not check_only, floor=floor)
        head = revision_name(head_number(cursor, soul))
    return {
        "added": done.added,
        "present": done.present,
        "forgotten": done.forgotten,
        "revision": head,
    }
