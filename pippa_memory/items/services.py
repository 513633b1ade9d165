"""A soul's memory items, read for the household: the engine's listing and lookup calls, the
rules of who may do what, and the refusal every call that did not work raises.

The engine enforces only visibility, by the ``viewer`` every call here names (the account asking):
household items, plus that member's own private items. Ownership is enforced here, before the
engine is asked to change anything (:mod:`pippa_memory.items.changes`):

* a member may forget, and change the scope of, an item they said (``said_by.member`` is their id);
  not an item someone else said (:data:`NOT_YOURS`);
* an account holding :data:`MANAGE_MEMORY` may also forget any household item, see each member's
  count of private items (never their text), and forget everything one member said.

What a member sends is checked before it is passed on, so no input of theirs can make the engine
fail for everyone (a failure counts against the breaker): a search's length and characters, an
item's or member's id, and a listing cursor, which must be one this site handed that member
(:mod:`pippa_memory.items.cursors`). Each is refused as a 400 naming the problem, with no call.

Every call here has the management budget (``MANAGE_BUDGET``), not the chat turn's. Nothing here
raises for the engine being down or memory being off: every call that did not work raises
:class:`MemoryRefusal` with a code, a message a person can act on and, for
``memory_unavailable``, the client's reason. A listing never shows an item this side has
tombstoned for its viewer (a forget whose answer was lost, or an item made private to someone
else): the engine may still list it, but it is treated as gone.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from django.contrib.auth.models import AbstractBaseUser
from django.utils.dateparse import parse_datetime

from pippa_memory.conf import memory_settings
from pippa_memory.engine import contract
from pippa_memory.engine.client import EngineOutcome, call_engine
from pippa_memory.engine.members import may_see, member_id
from pippa_memory.items import cursors
from pippa_memory.pins.tombstones import tombstoned_items
from webui.models import Soul

logger = logging.getLogger(__name__)

MANAGE_MEMORY = "pippa_memory.manage_memory"
NOT_YOURS = "not_yours"
PAGE_SIZE = 20
#: What the engine's item ids may look like; anything else is no item (never part of a path).
ITEM_ID_LENGTH = 200
#: The longest search passed on to the engine, and the longest listing cursor taken back.
QUERY_LENGTH = 200
CURSOR_LENGTH = 1000

UNAVAILABLE_WORDS = {
    "memory_disabled": "Memory is switched off for this household (PIPPA_MEMORY_ENABLED=false).",
    "engine_unconfigured": "No memory engine is configured (PIPPA_MEMORY_URL is not set).",
    "breaker_open": "The memory engine failed repeatedly; calls are paused for a short while.",
}


class MemoryRefusal(Exception):
    """A memory call that was not done: ``code`` (``memory_unavailable``, ``not_found``,
    ``not_yours``, ``no_owner``, ``invalid_cursor``, ``invalid``), what to tell the person, an HTTP status,
    and for ``memory_unavailable`` the engine client's ``reason``."""

    def __init__(self, *, code: str, message: str, status: int, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.reason = code, message, status, reason


@dataclass(frozen=True)
class MemoryItem:
    """One item as the engine describes it: who said it (``None``: an unattended run) and where."""

    id: str
    text: str
    at: datetime | None
    at_text: str
    scope: str
    said_by_member: str | None
    said_by_name: str
    conversation: str | None
    message: str | None
    tool_use: str | None
    keep: bool = False
    supersedes: dict[str, str] | None = None
    """Version 3: the memory this one replaced (``id``, ``text``, ``at``), if any."""
    superseded_by: dict[str, str] | None = None
    decision: dict[str, Any] | None = None

    @classmethod
    def from_engine(cls, data: dict[str, Any]) -> "MemoryItem":
        said_by, source = data["said_by"], data["source"]
        return cls(
            id=data["id"],
            text=data["text"],
            at=parse_datetime(data["at"]) if _parses(data["at"]) else None,
            at_text=data["at"],
            scope=data["scope"],
            said_by_member=said_by["member"] if said_by else None,
            said_by_name=said_by["name"] if said_by else "",
            conversation=source["conversation"],
            message=source["message"],
            tool_use=source["tool_use"],
            keep=data.get("keep") is True,
            supersedes=data.get("supersedes"),
            superseded_by=data.get("superseded_by"),
            decision=data.get("decision"),
        )

    def as_engine_shape(self) -> dict[str, Any]:
        """The contract's item shape, as the engine sent it."""
        said_by = None
        if self.said_by_member is not None:
            said_by = {"member": self.said_by_member, "name": self.said_by_name}
        return {
            "id": self.id,
            "text": self.text,
            "at": self.at_text,
            "scope": self.scope,
            "said_by": said_by,
            "source": {
                "conversation": self.conversation,
                "message": self.message,
                "tool_use": self.tool_use,
            },
            "keep": self.keep,
        }


def _parses(text: str) -> bool:
    try:
        return parse_datetime(text) is not None
    except ValueError:
        return False


@dataclass(frozen=True)
class ItemsPage:
    """One page of the items a viewer may see, newest first, and the engine's revision."""

    items: list[MemoryItem]
    next: str | None
    revision: str


@dataclass(frozen=True)
class NewChatMemory:
    """What a new chat of one member's would carry now: the ids of the memories its block holds,
    and how many memories they may see it leaves out (``None`` when the engine does not say)."""

    carries: frozenset[str]
    left_out: int | None

    @property
    def memories(self) -> int | None:
        """How many memories the member may see in all; ``None`` when not known."""
        return None if self.left_out is None else len(self.carries) + self.left_out


@dataclass(frozen=True)
class MemberCount:
    """A member who said something the soul keeps, with how many private items (never the text)."""

    member: str
    name: str
    private_items: int


# -- who may do what ------------------------------------------------------------------------------
def may_manage(user: AbstractBaseUser) -> bool:
    """Whether ``user`` holds :data:`MANAGE_MEMORY` (superusers hold every permission)."""
    return user.has_perm(MANAGE_MEMORY)


def said_it(user: AbstractBaseUser, item: MemoryItem) -> bool:
    return item.said_by_member is not None and item.said_by_member == member_id(user)


def may_forget(user: AbstractBaseUser, item: MemoryItem) -> bool:
    """The sayer may forget their item; a manager may also forget any household item."""
    return said_it(user, item) or (item.scope == "household" and may_manage(user))


def may_change_scope(user: AbstractBaseUser, item: MemoryItem) -> bool:
    """Only the member who said an item changes its scope."""
    return said_it(user, item)


def may_keep(user: AbstractBaseUser, item: MemoryItem) -> bool:
    """Marking an item *keep in every chat*, or unmarking it, follows the scope's rule: only the
    member who said it."""
    return may_change_scope(user, item)


# -- the engine's answers -------------------------------------------------------------------------
def unavailable_words(outcome: EngineOutcome) -> str:
    """Why memory cannot be reached, in words a member can act on."""
    if outcome.reason in UNAVAILABLE_WORDS:
        return UNAVAILABLE_WORDS[outcome.reason]
    return f"The memory engine did not answer usably ({outcome.reason}): {outcome.detail}"


def refused(outcome: EngineOutcome) -> MemoryRefusal:
    """The refusal for a call that did not work: the engine's own 404/409/400 business
    answers by their code, anything else as memory being unavailable."""
    code = ((outcome.data or {}).get("error") or {}).get("code") if outcome.status else None
    if outcome.status == 404 and code == "not_found":
        return MemoryRefusal(
            code="not_found", message="No such memory, or not one you can see.", status=404
        )
    if outcome.status == 409 and code == "no_owner":
        message = "This memory was kept by an unattended run: no member owns it to keep it private."
        return MemoryRefusal(code="no_owner", message=message, status=409)
    if outcome.status == 400 and code == "invalid_cursor":
        return invalid_cursor()
    return MemoryRefusal(
        code="memory_unavailable",
        message=f"Memory is unavailable: {unavailable_words(outcome)}",
        status=503,
        reason=outcome.reason,
    )


def soul_path(soul: Soul, *parts: str) -> str:
    return "/".join([f"/v1/souls/{quote(soul.slug, safe='')}", *(quote(p, safe="") for p in parts)])


def call_for_management(
    method: str, path: str, *, schema: dict[str, Any], body: Any = None
) -> EngineOutcome:
    """One management call, within ``MANAGE_BUDGET`` (its read timeout the same): the page's and
    the API's own budget, not the chat turn's."""
    budget = memory_settings.MANAGE_BUDGET
    return call_engine(method, path, body=body, schema=schema, budget=budget, read_timeout=budget)


def ask_engine(method: str, path: str, *, schema: dict[str, Any], body: Any = None) -> Any:
    """The data of the engine's usable answer; :class:`MemoryRefusal` for anything else."""
    outcome = call_for_management(method, path, body=body, schema=schema)
    if not outcome.ok:
        raise refused(outcome)
    return outcome.data


def visible_items(*, soul: Soul, viewer: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The engine's ``items`` that ``viewer`` may see (:func:`~pippa_memory.engine.members.may_see`):
    the engine enforces it, and this checks again, since another member's private memory reaching
    a viewer is a defect on any path. What was dropped is logged by id only, never its text."""
    visible = [item for item in items if may_see(viewer, item)]
    if len(visible) < len(items):
        dropped = sorted(item["id"] for item in items if not may_see(viewer, item))
        logger.error(
            "The engine's listing of %s for member %s held %d item(s) they may not see; "
            "they were dropped: %s.",
            soul.slug,
            viewer,
            len(dropped),
            ", ".join(dropped),
        )
    return visible


REASON_WITHHELD = "Not shown: the reason speaks of a memory you cannot see."
"""A decision's reason in place of its words, unless the item shows the memory it was judged with."""
POINTERS = ("supersedes", "superseded_by")
MEMBERS_OWN = frozenset({"corrected", "restored"})
"""Decisions a member made on the memory page: their reason is the engine's fixed sentence."""


def shown_here(*, soul: Soul, viewer: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` without those tombstoned here for ``viewer`` (a forget or make-private the
    engine may not have confirmed), each :func:`without_traces` of a tombstoned one."""
    gone = tombstoned_here(soul=soul, viewer=viewer, items=items)
    return [without_traces(item, gone) for item in items if item["id"] not in gone]


def tombstoned_here(*, soul: Soul, viewer: str, items: list[dict[str, Any]]) -> set[str]:
    """The ids among ``items`` and what they replaced or were replaced by that are tombstoned
    here for ``viewer``."""
    ids = {item["id"] for item in items}
    ids |= {item[key]["id"] for item in items for key in POINTERS if item.get(key)}
    return tombstoned_items(soul_id=soul.pk, viewer=viewer, items=sorted(ids))


def without_traces(item: dict[str, Any], gone: set[str]) -> dict[str, Any]:
    """``item`` with no trace of a memory in ``gone``: what it replaced (``supersedes``, with its
    words) is left out when tombstoned; and its decision's reason, which may quote whatever it was
    judged with (a decision names no such memory), is withheld unless the item shows the memory
    it replaced or that replaced it, neither tombstoned (a member's own correction or restore
    is worded by the engine, and shown)."""
    item = dict(item)
    if (item.get("supersedes") or {}).get("id") in gone:
        item["supersedes"] = None
    shown = [key for key in POINTERS if item.get(key) and item[key]["id"] not in gone]
    decision = item.get("decision")
    if decision and decision["outcome"] not in MEMBERS_OWN and not shown:
        item["decision"] = {**item["decision"], "reason": REASON_WITHHELD}
    return item


def usable_id(value: str) -> bool:
    """Whether ``value`` may name an item or a member in a path to the engine: 1 to
    :data:`ITEM_ID_LENGTH` characters, none of them a control character."""
    return 0 < len(value) <= ITEM_ID_LENGTH and not any(
        ord(ch) < 32 or ord(ch) == 127 for ch in value
    )


def no_such_item() -> MemoryRefusal:
    return MemoryRefusal(
        code="not_found", message="No such memory, or not one you can see.", status=404
    )


# -- reads ----------------------------------------------------------------------------------------
def fetch_items_page(
    *, soul: Soul, user: AbstractBaseUser, q: str = "", cursor: str = "", limit: int = PAGE_SIZE
) -> ItemsPage:
    """One page of the items ``user`` may see of ``soul``'s memory, newest first, matching the
    words of ``q`` (empty: all). Household items and the user's own private items only."""
    viewer = member_id(user)
    query = {"viewer": viewer, "q": checked_query(q), "limit": str(limit)}
    if cursor:
        try:
            query["cursor"] = cursors.taken_back(cursor, soul=soul.slug, viewer=viewer)
        except cursors.BadCursor:
            raise invalid_cursor() from None
    data = ask_engine(
        "GET", f"{soul_path(soul, 'items')}?{urlencode(query)}", schema=contract.ITEMS
    )
    visible = visible_items(soul=soul, viewer=viewer, items=data["items"])
    items = [MemoryItem.from_engine(i) for i in shown_here(soul=soul, viewer=viewer, items=visible)]
    following = cursors.handed_out(data["next"], soul=soul.slug, viewer=viewer)
    return ItemsPage(items=items, next=following, revision=data["revision"])


def fetch_orphaned(
    *, soul: Soul, user: AbstractBaseUser, q: str = "", limit: int = PAGE_SIZE
) -> list[MemoryItem]:
    """The newest ``limit`` replaced memories ``user`` may see that no current memory they see
    replaced (what replaced them was forgotten, replaced in turn, or is not theirs to see), so
    they show under none; contract v3's ``replaced=orphaned`` listing, checked as any listing."""
    viewer = member_id(user)
    query = {"viewer": viewer, "q": checked_query(q), "limit": str(limit), "replaced": "orphaned"}
    data = ask_engine(
        "GET", f"{soul_path(soul, 'items')}?{urlencode(query)}", schema=contract.ITEMS
    )
    visible = visible_items(soul=soul, viewer=viewer, items=data["items"])
    return [MemoryItem.from_engine(i) for i in shown_here(soul=soul, viewer=viewer, items=visible)]


def checked_query(q: str) -> str:
    """``q`` if it may be passed on as a search; :class:`MemoryRefusal` ``invalid`` (400) for one
    over :data:`QUERY_LENGTH` characters or holding a control character (a NUL no database can
    hold among them), refused before the engine is asked."""
    if len(q) > QUERY_LENGTH:
        return refuse_input(
            f"A search may be at most {QUERY_LENGTH} characters: shorten it and search again."
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in q):
        return refuse_input("A search may not hold control characters (such as NUL).")
    return q


def refuse_input(message: str) -> str:
    raise MemoryRefusal(code="invalid", message=message, status=400)


def invalid_cursor() -> MemoryRefusal:
    message = "That page of memories is not one this site gave; start from the first page."
    return MemoryRefusal(code="invalid_cursor", message=message, status=400)


def fetch_new_chat_memory(*, soul: Soul, user: AbstractBaseUser) -> NewChatMemory:
    """What a chat ``user`` began now would carry of ``soul``'s memory: the head as they see it
    (its block's item ids, and the ``left_out`` count), one call. A head for another soul or
    viewer is refused as unavailable; an id tombstoned here for them is not counted as carried
    (such a head is not pinned: :mod:`pippa_memory.pins.head`)."""
    viewer = member_id(user)
    data = ask_engine(
        "GET", f"{soul_path(soul, 'head')}?{urlencode({'viewer': viewer})}", schema=contract.BLOCK
    )
    if data["soul"] != soul.slug or data["viewer"] != viewer:
        raise MemoryRefusal(
            code="memory_unavailable",
            message="Memory is unavailable: the engine answered for another soul or member.",
            status=503,
            reason="wrong_viewer",
        )
    held = set(data["items"])
    held -= tombstoned_items(soul_id=soul.pk, viewer=viewer, items=held)
    return NewChatMemory(carries=frozenset(held), left_out=data.get("left_out"))


def fetch_member_counts(*, soul: Soul, user: AbstractBaseUser) -> list[MemberCount]:
    """For a manager: each member's count of private items, never their text."""
    if not may_manage(user):
        raise MemoryRefusal(code=NOT_YOURS, message="Only a memory manager sees this.", status=403)
    data = ask_engine("GET", soul_path(soul, "members"), schema=contract.MEMBERS)
    return [
        MemberCount(member=m["member"], name=m["name"], private_items=m["private_items"])
        for m in data["members"]
    ]


def fetch_item(
    *, soul: Soul, viewer: str, item_id: str, even_if_forgotten_here: bool = False
) -> MemoryItem:
    """The item ``item_id`` as ``viewer`` sees it, found with one call to the engine (contract
    v3's item lookup, never a walk over pages). :class:`MemoryRefusal` ``not_found`` when it does
    not exist, is not visible, or is tombstoned here for ``viewer`` (a forget or a make-private
    the engine did not confirm); ``even_if_forgotten_here`` finds it all the same, so a forget
    asked again reaches the engine and settles it."""
    if not usable_id(item_id):
        raise no_such_item()
    path = f"{soul_path(soul, 'items', item_id)}?{urlencode({'viewer': viewer})}"
    data = ask_engine("GET", path, schema=contract.ITEM_FOUND)
    found = visible_items(soul=soul, viewer=viewer, items=[data["item"]])
    if not found or found[0]["id"] != item_id:
        raise no_such_item()
    gone = tombstoned_here(soul=soul, viewer=viewer, items=found)
    if item_id in gone and not even_if_forgotten_here:
        raise no_such_item()
    return MemoryItem.from_engine(without_traces(found[0], gone))


def not_yours(action: str) -> MemoryRefusal:
    return MemoryRefusal(
        code=NOT_YOURS,
        message=f"Only the member who said this memory can {action} it.",
        status=403,
    )
