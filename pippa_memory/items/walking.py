"""Every item a viewer may see, read a page at a time: for a member's download and for the
texts of what a leaving member said."""

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from pippa_memory.engine import contract
from pippa_memory.items.services import ask_engine, soul_path, visible_items
from webui.models import Soul


def walk_items(*, soul: Soul, viewer: str) -> Iterator[dict[str, Any]]:
    """Every item ``viewer`` may see of ``soul``'s memory, as the engine gives them, fetched a
    page of 100 at a time as the caller reads on, to the last page however many there are. A
    cursor the engine gave before ends the walk (an engine that loops would never end it)."""
    cursor, seen = "", set()
    while True:
        query = {"viewer": viewer, "limit": "100", **({"cursor": cursor} if cursor else {})}
        data = ask_engine(
            "GET", f"{soul_path(soul, 'items')}?{urlencode(query)}", schema=contract.ITEMS
        )
        yield from visible_items(soul=soul, viewer=viewer, items=data["items"])
        seen.add(cursor)
        if not data["next"] or data["next"] in seen:
            return
        cursor = data["next"]


def fetch_said_by(*, soul: Soul, member: str) -> dict[str, str]:
    """Every item ``member`` said (household and private), by id, with its text, asked of the
    engine with that member as the viewer, every page of it: the ids to tombstone before their
    forget and the texts to purge (:mod:`pippa_memory.forgotten_text`). Shown to no one, and
    never stored."""
    return {
        item["id"]: item["text"]
        for item in walk_items(soul=soul, viewer=member)
        if (item["said_by"] or {}).get("member") == member
    }
