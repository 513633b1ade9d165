"""Tombstones close the race between a forget and a first turn's pin.

A first turn asks the engine for the head, then stores and pins the block it answered. A forget
(or an item made private) that the engine applies in between would be missed by the re-pin of
:mod:`pippa_memory.pins.forgetting`, which scans the blocks stored *after* the engine confirmed, and
the block would ride that conversation for life. So every forget, forget-member and make-private
first records an :class:`~pippa_memory.models.ItemTombstone` per item, in its own committed
transaction, *before* the engine is asked; and the pin step checks a block's items against the
tombstones that apply to its viewer, both before it stores the block and again once its pin is
committed (:mod:`pippa_memory.pins.head`). Of the two orders, either the check sees the tombstone
(and the block is refused), or the pin was committed before the tombstone, and so before the
forget's scan, which then re-pins it. A forget-member's answer lists exactly the ids the engine
forgot: one its first read missed (said in between) is tombstoned when the answer arrives, still
before the scan, so the same holds for it.

A tombstone whose change the engine refused for sure (a 4xx, or a call never made) is withdrawn:
the item was not forgotten, and its blocks stay pinnable. A change whose answer never came (a
timeout, a reset, a 5xx) keeps its tombstones: it may have been applied, and is treated as done
(:mod:`pippa_memory.items.changes`). Tombstones go after
``PIPPA_MEMORY_PRUNE_TOMBSTONES_DAYS`` (:mod:`pippa_memory.retention`): by then no first turn
that fetched a head before the change is still running.
"""

from collections.abc import Iterable

from django.db import connection, transaction

from pippa_memory.models import ItemTombstone
from webui.models import Soul


def record_tombstones(*, soul: Soul, item_ids: Iterable[str], spared_viewer: str = "") -> list[int]:
    """Record and commit a tombstone per item before the engine is asked to change it; returns
    their ids, for :func:`withdraw_tombstones`. ``spared_viewer``: the owner of an item being
    made private, whose own blocks may still hold it."""
    rows = [
        ItemTombstone(soul=soul, item_id=item_id, spared_viewer=spared_viewer)
        for item_id in sorted(set(item_ids))
    ]
    with transaction.atomic(durable=True):
        return [row.pk for row in ItemTombstone.objects.bulk_create(rows)]


def withdraw_tombstones(tombstone_ids: list[int], *, of_items: Iterable[str] | None = None) -> None:
    """Remove the tombstones of a change the engine refused: nothing was forgotten. With
    ``of_items``, only those of these items (the engine's answer says it did not forget them)."""
    stones = ItemTombstone.objects.filter(pk__in=tombstone_ids)
    if of_items is not None:
        stones = stones.filter(item_id__in=set(of_items))
    stones.delete()


def is_forgotten(*, soul: Soul, item_id: str) -> bool:
    """Whether a forget of ``item_id`` was recorded here (and not withdrawn): asked again, it is a
    success."""
    return ItemTombstone.objects.filter(soul=soul, item_id=item_id, spared_viewer="").exists()


def withdraw_made_private(*, soul: Soul, item_id: str) -> None:
    """An item made household again may be in anyone's block: its make-private tombstones go."""
    ItemTombstone.objects.filter(soul=soul, item_id=item_id).exclude(spared_viewer="").delete()


def recorded_changes(*, soul: Soul) -> tuple[set[str], dict[str, str]]:
    """The forgets and make-privates recorded here for ``soul`` (confirmed by the engine or not):
    the ids forgotten, and each item made private with the member it is private to. What leaves
    the site whole (an export) holds to them, as a block does."""
    forgotten: set[str] = set()
    made_private: dict[str, str] = {}
    rows = ItemTombstone.objects.filter(soul=soul).values_list("item_id", "spared_viewer")
    for item_id, spared_viewer in rows.iterator():
        if spared_viewer:
            made_private[item_id] = spared_viewer
        else:
            forgotten.add(item_id)
    return forgotten, made_private


def tombstoned_items(*, soul_id: int, viewer: str, items: Iterable[str]) -> set[str]:
    """Which of ``items`` a block rendered for ``viewer`` ("" for household only) may not hold:
    those forgotten, and those made private to someone other than ``viewer``. No query for no
    items.

    Every chat turn asks this of its pinned block, so it is one plain statement on the
    ``(soul, item_id)`` index: the ORM's compiling of the same filter cost more than the query
    itself, a third of what memory added to a turn (``bench/turn_overhead.py``).

    An id holding a NUL character is no item's (PostgreSQL's text cannot hold one, so no tombstone
    names it): it is left out of the query, which PostgreSQL would refuse with a server error."""
    wanted = sorted({item for item in items if "\x00" not in item})
    if not wanted:
        return set()
    found: list[tuple[str, str]] = []
    for start in range(0, len(wanted), _IDS_PER_STATEMENT):
        chunk = wanted[start : start + _IDS_PER_STATEMENT]
        with connection.cursor() as cursor:
            cursor.execute(_tombstones_sql(len(chunk)), [soul_id, *chunk])
            found.extend(cursor.fetchall())
    return {item_id for item_id, kept_for in found if not kept_for or kept_for != viewer}


#: Ids per statement: well under SQLite's limit on bound parameters.
_IDS_PER_STATEMENT = 500


def _tombstones_sql(count: int) -> str:
    quote = connection.ops.quote_name
    meta = ItemTombstone._meta
    column = {field.name: quote(field.column) for field in meta.concrete_fields}
    marks = ", ".join(["%s"] * count)
    return (
        f"SELECT {column['item_id']}, {column['spared_viewer']} FROM {quote(meta.db_table)} "
        f"WHERE {column['soul']} = %s AND {column['item_id']} IN ({marks})"
    )
