"""Changing a soul's memory: forget an item, change its scope or its *keep in every chat* mark,
forget a member.

Each change that takes something out of someone's view first commits a tombstone per item
(:mod:`pippa_memory.pins.tombstones`), then asks the engine, within the management budget
(``MANAGE_BUDGET``). The engine's outcome is one of three:

* **confirmed** (a 2xx; for a forget also ``404 not_found``: the item is gone already, so a
  forget asked again is a success): done;
* **refused** for sure (a 4xx the contract names, or a call that was never made: memory off, no
  engine configured, the breaker open): nothing changed, the tombstones are withdrawn, and
  :class:`~pippa_memory.items.services.MemoryRefusal` is raised;
* **not confirmed** (no answer, a timeout, a reset connection, a 5xx, a 429, an unusable
  answer): the engine may have applied it. Unknown is not "no": for privacy it is treated as done
  (tombstones kept, the chats whose pinned block holds the items re-pinned, the items' text
  purged from the other copies, :mod:`pippa_memory.forgotten_text`), and reported as not
  confirmed (:attr:`Changed.confirmed`) with the reason. Doing it again is safe.

Until the engine has really forgotten an item whose forget was not confirmed, every head that
still holds it is refused (a first turn pins absent, ``stale_block``, and asks again next turn),
and listings and recalls leave it out: the member's memory is held back rather than the forgotten
item shown. A forget asked again settles it.
"""

import logging
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import AbstractBaseUser

from pippa_memory.engine import contract
from pippa_memory.engine.client import EngineOutcome
from pippa_memory.engine.members import member_id
from pippa_memory.forgotten_text import Purged, purge_forgotten_text, purge_made_private
from pippa_memory.items import services, walking
from pippa_memory.items.services import MemoryItem, MemoryRefusal
from pippa_memory.pins import forgetting, tombstones
from pippa_memory.pins.records import MADE_PRIVATE
from webui.models import Soul

logger = logging.getLogger(__name__)

#: Reasons of a call the client never made: the engine cannot have applied it.
NOT_SENT = frozenset({"memory_disabled", "engine_unconfigured", "breaker_open", "request_failed"})
#: 4xx statuses that do not say the engine refused: the request may have taken effect.
UNCERTAIN_STATUSES = frozenset({408, 429})


@dataclass(frozen=True)
class Changed:
    """A change as done: its new ``revision`` (``None`` when unknown), how many items it touched
    (one, or a member's count), the item as it is now (a scope change), what happened to the
    pins and to the other copies, and whether the engine ``confirmed`` it (else ``reason`` says
    why not: it was treated as done for privacy)."""

    revision: str | None
    count: int
    repinned: forgetting.Repinned
    item: MemoryItem | None = None
    confirmed: bool = True
    reason: str = ""
    purged: Purged = field(default_factory=Purged)

    def unconfirmed_words(self) -> str:
        """What to tell the person when the engine did not confirm; empty when it did."""
        if self.confirmed:
            return ""
        return (
            f"The memory engine did not confirm this ({self.reason}). For privacy it was "
            "treated as done: no conversation will carry it from now on. Doing it again is "
            "safe, and lets the engine confirm."
        )


@dataclass(frozen=True)
class ChangeResponse:
    """The engine's response to a change: its data when confirmed with one, and why not when not
    confirmed."""

    data: dict[str, Any] | None
    confirmed: bool
    reason: str = ""

    @property
    def revision(self) -> str | None:
        return (self.data or {}).get("revision")


def refused_for_sure(outcome: EngineOutcome) -> bool:
    """Whether ``outcome`` says the change was not made: never sent, or a 4xx refusal."""
    if outcome.reason in NOT_SENT:
        return True
    status = outcome.status
    return status is not None and 400 <= status < 500 and status not in UNCERTAIN_STATUSES


def is_not_found(outcome: EngineOutcome) -> bool:
    code = ((outcome.data or {}).get("error") or {}).get("code")
    return outcome.status == 404 and code == "not_found"


def ask_for_change(
    method: str,
    path: str,
    *,
    schema: dict[str, Any],
    tombstone_ids: list[int],
    body: Any = None,
    gone_is_done: bool = False,
) -> ChangeResponse:
    """Ask the engine for a change whose tombstones are recorded. Confirmed (or, with
    ``gone_is_done``, answered ``404 not_found``): done. Refused for sure: the tombstones are
    withdrawn and :class:`MemoryRefusal` raised. Anything else: not confirmed, tombstones kept."""
    outcome = services.call_for_management(method, path, schema=schema, body=body)
    if outcome.ok:
        return ChangeResponse(data=outcome.data, confirmed=True)
    if gone_is_done and is_not_found(outcome):
        return ChangeResponse(data=None, confirmed=True)
    if refused_for_sure(outcome):
        tombstones.withdraw_tombstones(tombstone_ids)
        raise services.refused(outcome)
    logger.warning(
        "The engine did not confirm %s %s (%s); treated as done for privacy [request %s].",
        method,
        path.split("?")[0],
        outcome.reason,
        outcome.request_id,
    )
    return ChangeResponse(data=None, confirmed=False, reason=outcome.reason)


def forget_item(*, soul: Soul, user: AbstractBaseUser, item_id: str) -> Changed:
    """Forget one item ``user`` may forget; then every conversation whose pinned block held it
    re-pins at its next turn (reason ``forgotten``), blocks no one pins any more are deleted, and
    its text is purged from the other copies. Done, or not confirmed and treated as done.

    An item this side already forgot (its forget tombstone stands, the engine no longer lists it)
    is forgotten again with success. Raises :class:`MemoryRefusal`: ``not_found``, ``not_yours``,
    or ``memory_unavailable`` when the engine could not be asked or refused.
    """
    try:
        item = services.fetch_item(
            soul=soul, viewer=member_id(user), item_id=item_id, even_if_forgotten_here=True
        )
    except MemoryRefusal as refusal:
        if refusal.code == "not_found" and tombstones.is_forgotten(soul=soul, item_id=item_id):
            return Changed(revision=None, count=1, repinned=forgetting.Repinned())
        raise
    if not services.may_forget(user, item):
        raise services.not_yours("forget")
    path = f"{services.soul_path(soul, 'items', item.id)}?{urlencode({'viewer': member_id(user)})}"
    stones = tombstones.record_tombstones(soul=soul, item_ids={item.id})
    response = ask_for_change(
        "DELETE", path, schema=contract.FORGOTTEN, tombstone_ids=stones, gone_is_done=True
    )
    repinned = forgetting.repin_holders(soul=soul, item_ids={item.id}, requested_by=user)
    purged = purge_forgotten_text(soul=soul, texts=[item.text])
    return Changed(
        revision=response.revision,
        count=1,
        repinned=repinned,
        confirmed=response.confirmed,
        reason=response.reason,
        purged=purged,
    )


def change_scope(*, soul: Soul, user: AbstractBaseUser, item_id: str, scope: str) -> Changed:
    """Make an item ``user`` said ``private`` or ``household``.

    Made private, it leaves every other member's view: their conversations whose pinned block
    held it re-pin at the next turn (reason ``made_private``), and copies others read are purged;
    not confirmed, that is done all the same. Made household, no pinned block changes
    (conversations started from now on see it), and an outcome not confirmed is reported as not
    done. Raises :class:`MemoryRefusal`.
    """
    item = services.fetch_item(soul=soul, viewer=member_id(user), item_id=item_id)
    if not services.may_change_scope(user, item):
        raise services.not_yours("change the scope of")
    owner = member_id(user)
    making_private = scope == "private" and item.scope != "private"
    stones = []
    if making_private:
        stones = tombstones.record_tombstones(soul=soul, item_ids={item.id}, spared_viewer=owner)
    body = {"viewer": owner, "scope": scope}
    path = services.soul_path(soul, "items", item.id)
    response = ask_for_change(
        "PATCH", path, schema=contract.RESCOPED, body=body, tombstone_ids=stones
    )
    if not response.confirmed and not making_private:
        raise MemoryRefusal(
            code="memory_unavailable",
            message=f"The memory engine did not confirm the change ({response.reason}); try again.",
            status=503,
            reason=response.reason,
        )
    changed = (
        MemoryItem.from_engine(response.data["item"])
        if response.data
        else replace(item, scope=scope)
    )
    if changed.scope == "household":
        tombstones.withdraw_made_private(soul=soul, item_id=item.id)
    repinned, purged = forgetting.Repinned(), Purged()
    if changed.scope == "private" and item.scope != "private":
        repinned = forgetting.repin_holders(
            soul=soul,
            item_ids={item.id},
            requested_by=user,
            reason=MADE_PRIVATE,
            sparing_viewer=owner,
        )
        purged = purge_made_private(soul=soul, texts=[item.text], owner=owner)
    return Changed(
        revision=response.revision,
        count=1,
        repinned=repinned,
        item=changed,
        confirmed=response.confirmed,
        reason=response.reason,
        purged=purged,
    )


def set_keep(*, soul: Soul, user: AbstractBaseUser, item_id: str, keep: bool) -> Changed:
    """Mark an item ``user`` said *keep in every chat* (``keep``), or unmark it: the engine
    moves the head, so chats begun from now on carry it first (or no longer must). No pinned
    block changes and nothing is re-pinned: a mark takes nothing out of anyone's view. An
    outcome the engine did not confirm is reported as not done (a 503), and may be asked again.
    Raises :class:`MemoryRefusal` (``not_found``, ``not_yours``, ``memory_unavailable``)."""
    item = services.fetch_item(soul=soul, viewer=member_id(user), item_id=item_id)
    if not services.may_keep(user, item):
        raise services.not_yours("mark")
    body = {"viewer": member_id(user), "keep": keep}
    path = services.soul_path(soul, "items", item.id)
    response = ask_for_change("PATCH", path, schema=contract.RESCOPED, body=body, tombstone_ids=[])
    if not response.confirmed:
        raise MemoryRefusal(
            code="memory_unavailable",
            message=f"The memory engine did not confirm the change ({response.reason}); try again.",
            status=503,
            reason=response.reason,
        )
    changed = MemoryItem.from_engine(response.data["item"])
    if changed.id != item.id or changed.keep is not keep:
        # An engine that does not keep the mark (one from before contract version 3's keep).
        raise MemoryRefusal(
            code="memory_unavailable",
            message="The memory engine did not keep the mark: it may not know it yet.",
            status=503,
            reason="keep_not_kept",
        )
    return Changed(
        revision=response.revision, count=1, repinned=forgetting.Repinned(), item=changed
    )


def forget_member(*, soul: Soul, user: AbstractBaseUser, member: str) -> Changed:
    """For a manager: forget everything ``member`` said to ``soul`` (a member who leaves), then
    re-pin the conversations whose block held any of it and purge its text from the other copies.
    Raises :class:`MemoryRefusal`.

    Every item the member said is read first, every page of it (with the member as the viewer),
    and tombstoned before the engine is asked. Confirmed, the engine's answer lists the ``ids`` it
    forgot, however many (contract version 3): exactly those stay tombstoned (one it listed that
    the read missed, said in between, is tombstoned too; one it did not list is not forgotten,
    and its tombstone goes) and exactly their holders re-pin. Not confirmed, what the read found
    is treated as forgotten, and every block stored since the read began is treated as holding
    one of them (the member may have said more in between).
    """
    if not services.may_manage(user):
        raise MemoryRefusal(
            code=services.NOT_YOURS,
            message="Only a memory manager can forget a member.",
            status=403,
        )
    if not services.usable_id(member):
        raise MemoryRefusal(code="not_found", message="No such member.", status=404)
    started = forgetting.now()
    said = walking.fetch_said_by(soul=soul, member=member)
    path = services.soul_path(soul, "members", member, "forget")
    stones = tombstones.record_tombstones(soul=soul, item_ids=said)
    response = ask_for_change(
        "POST", path, schema=contract.FORGOTTEN_MEMBER, body={}, tombstone_ids=stones
    )
    if response.data is None:
        item_ids, fetched_since = set(said), started
    else:
        item_ids, fetched_since = set(response.data["ids"]), None
        tombstones.record_tombstones(soul=soul, item_ids=item_ids - set(said))
        tombstones.withdraw_tombstones(stones, of_items=set(said) - item_ids)
    repinned = forgetting.repin_holders(
        soul=soul, item_ids=item_ids, requested_by=user, fetched_since=fetched_since
    )
    purged = purge_forgotten_text(soul=soul, texts=[said[i] for i in item_ids if i in said])
    return Changed(
        revision=response.revision,
        count=len(item_ids),
        repinned=repinned,
        confirmed=response.confirmed,
        reason=response.reason,
        purged=purged,
    )
