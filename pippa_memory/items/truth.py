"""Memory that stays true, from the memory page: add a memory (as ``remember`` would, private or
household), correct one (new words replacing it by the member's own decision) and restore one a
newer memory replaced.

Who may: the rules forgetting follows (:func:`~pippa_memory.items.services.may_forget`): the
member who said it, or a memory manager for a household memory. Correcting and restoring take
nothing out of anyone's view of what they may see (a replaced memory stays in history, and a
conversation's pinned block keeps its bytes), so nothing is tombstoned or re-pinned: the next
chat simply carries what is current. An answer the engine did not confirm is reported as not done
(a 503), and may be asked again; adding again is safe (the same words are one memory).
"""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from pippa_memory.engine import contract
from pippa_memory.engine.members import member_id, member_name
from pippa_memory.items import services
from pippa_memory.items.services import MemoryItem, MemoryRefusal
from pippa_memory.models import Scope
from webui.models import Soul

MOST_CHARS = 2000
"""The longest memory added or corrected to (as the engine takes)."""


def may_correct(user: AbstractBaseUser, item: MemoryItem) -> bool:
    """Who may change a memory's words, or restore it: who may forget it."""
    return services.may_forget(user, item)


def checked_words(text: str) -> str:
    words = " ".join(text.split())
    if not words:
        raise MemoryRefusal(code="invalid", message="Write the memory in words.", status=400)
    if len(text) > MOST_CHARS:
        message = f"A memory may be at most {MOST_CHARS} characters: shorten it."
        raise MemoryRefusal(code="invalid", message=message, status=400)
    return text.strip()


def changed_item(soul: Soul, method: str, path: str, body: dict[str, Any]) -> MemoryItem:
    """The engine's item after a change, with no trace of a memory tombstoned here for the
    member (:func:`~pippa_memory.items.services.without_traces`); :class:`MemoryRefusal` when it
    was refused or not confirmed (nothing is taken out of anyone's view, so not done is safe to
    say)."""
    outcome = services.call_for_management(method, path, schema=contract.ITEM_FOUND, body=body)
    if outcome.ok:
        item = outcome.data["item"]
        gone = services.tombstoned_here(soul=soul, viewer=body["viewer"], items=[item])
        return MemoryItem.from_engine(services.without_traces(item, gone))
    code = ((outcome.data or {}).get("error") or {}).get("code") if outcome.status else None
    if outcome.status == 400 and code in ("same_words", "invalid_text", "invalid_request"):
        message = (outcome.data or {}).get("error", {}).get("message", "The words were refused.")
        raise MemoryRefusal(code="invalid", message=message, status=400)
    if outcome.status == 409 and code == "not_current":
        message = "A newer memory replaced this one: restore it first, then correct it."
        raise MemoryRefusal(code="not_current", message=message, status=409)
    raise services.refused(outcome)


def add_memory(*, soul: Soul, user: AbstractBaseUser, text: str, scope: str) -> MemoryItem:
    """Keep ``text`` said by ``user``, private to them or for the household."""
    if scope not in (Scope.PRIVATE.value, Scope.HOUSEHOLD.value):
        raise MemoryRefusal(code="invalid", message="Choose private or household.", status=400)
    body = {
        "viewer": member_id(user),
        "name": member_name(user),
        "text": checked_words(text),
        "scope": scope,
    }
    return changed_item(soul, "POST", services.soul_path(soul, "items"), body)


def correct_memory(*, soul: Soul, user: AbstractBaseUser, item_id: str, text: str) -> MemoryItem:
    """Replace the current memory ``item_id`` by ``text`` said by ``user``; the new memory."""
    item = services.fetch_item(soul=soul, viewer=member_id(user), item_id=item_id)
    if not may_correct(user, item):
        raise services.not_yours("correct")
    body = {"viewer": member_id(user), "name": member_name(user), "text": checked_words(text)}
    return changed_item(soul, "POST", services.soul_path(soul, "items", item.id, "correct"), body)


def restore_memory(*, soul: Soul, user: AbstractBaseUser, item_id: str) -> MemoryItem:
    """Make the replaced memory ``item_id`` current again."""
    item = services.fetch_item(soul=soul, viewer=member_id(user), item_id=item_id)
    if not may_correct(user, item):
        raise services.not_yours("restore")
    body = {"viewer": member_id(user)}
    return changed_item(soul, "POST", services.soul_path(soul, "items", item.id, "restore"), body)
