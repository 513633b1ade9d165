"""A member's own hand on what is true: adding a memory from the memory page (as ``remember``
would), correcting one (new words replacing it, by the member's own decision, no door needed) and
restoring one a newer memory replaced; and the items as contract version 3 shows them, with what
each replaced (``supersedes``), what replaced it (``superseded_by``) and the last decision about it.

Each change runs in one transaction and moves the head, as every change does.
"""

from typing import Any

from reference_engine.events import NewMemory
from reference_engine.selection import same_words
from reference_engine.souls import Memory, UnknownItem
from reference_engine.storage import truth
from reference_engine.storage.database import Cursor
from reference_engine.storage.memories import find_memory, keep_memory
from reference_engine.storage.revisions import head_number, revision_name

MOST_CHARS = 2000
"""The longest memory a member may add or correct to on the memory page (as the tool takes)."""


class NotCurrent(ValueError):
    """A memory a newer one replaced cannot be corrected (restore it first)."""


class SameWords(ValueError):
    """A correction with the words the memory has already changes nothing."""


def shown(cursor: Cursor, memories: list[Memory], *, viewer: str | None) -> list[dict[str, Any]]:
    """``memories`` in the contract's version 3 item shape, each with ``supersedes``,
    ``superseded_by`` and ``decision`` as ``viewer`` may see them."""
    truths = truth.truth_of(cursor, [m.seq for m in memories], viewer=viewer)
    return [{**m.item(), **truths[m.seq]} for m in memories]


def checked_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a memory in words")
    if len(text) > MOST_CHARS:
        raise ValueError(f"text must be at most {MOST_CHARS} characters")
    return text.strip()


def said_by(member: str | None, name: str | None) -> dict[str, str] | None:
    return {"member": member, "name": name or member} if member else None


def item_body(cursor: Cursor, soul: str, item_id: str, viewer: str | None) -> dict[str, Any]:
    memory = find_memory(cursor, soul, item_id, viewer=viewer)
    return {
        "item": shown(cursor, [memory], viewer=viewer)[0],
        "revision": revision_name(head_number(cursor, soul)),
    }


def add(
    state: Any, soul: str, text: Any, *, scope: str, member: str | None, name: str | None
) -> dict[str, Any]:
    """Keep a memory as ``remember`` would (the same words kept once); the item and the head."""
    words = checked_text(text)
    with state.database.write() as cursor:
        _, item_id = keep_memory(cursor, soul, NewMemory(words, scope, said_by(member, name), {}))
        return item_body(cursor, soul, item_id, member)


def correct(
    state: Any, soul: str, item_id: str, text: Any, *, viewer: str | None, name: str | None
) -> dict[str, Any]:
    """Keep ``text`` said by ``viewer`` in the scope of the current item ``item_id`` (one
    ``viewer`` may see, else :class:`UnknownItem`) and mark that item replaced by it; the new
    item and the head."""
    words = checked_text(text)
    with state.database.write() as cursor:
        old = find_memory(cursor, soul, item_id, viewer=viewer)
        if truth.replaced_by(cursor, old.seq) is not None:
            raise NotCurrent("A memory a newer one replaced cannot be corrected; restore it first.")
        if same_words(words) == same_words(old.text):
            raise SameWords("The correction has the words the memory has already.")
        _, new_id = keep_memory(
            cursor, soul, NewMemory(words, old.scope, said_by(viewer, name), {})
        )
        new = find_memory(cursor, soul, new_id, viewer=viewer)
        rev = truth.replace(cursor, soul, old.seq, new.seq)
        truth.record_decision(
            cursor,
            soul,
            new_seq=new.seq,
            old_seq=old.seq,
            outcome=truth.CORRECTED,
            reason="Corrected on the memory page: the member's own decision.",
            judged_by=f"member {viewer}" if viewer else "an unattended caller",
            choice="the new one replaces the old",
            confidence=1.0,
            rev=rev,
        )
        return item_body(cursor, soul, new_id, viewer)


def restore(state: Any, soul: str, item_id: str, *, viewer: str | None) -> dict[str, Any]:
    """Make the replaced item ``item_id`` (one ``viewer`` may see, else :class:`UnknownItem`) a
    current memory again (the head moves); restoring a current one changes nothing."""
    with state.database.write() as cursor:
        memory = find_memory(cursor, soul, item_id, viewer=viewer)
        newer = truth.replaced_by(cursor, memory.seq)
        if newer is not None:
            rev = truth.restore(cursor, soul, memory.seq)
            truth.record_decision(
                cursor,
                soul,
                new_seq=memory.seq,
                old_seq=newer,
                outcome=truth.RESTORED,
                reason="Restored on the memory page: the member's own decision.",
                judged_by=f"member {viewer}" if viewer else "an unattended caller",
                rev=rev,
            )
        return item_body(cursor, soul, item_id, viewer)


__all__ = ["NotCurrent", "SameWords", "UnknownItem", "add", "correct", "restore", "shown"]
