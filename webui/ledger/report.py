"""Reads for the cache bill: the ledger (:class:`~webui.models.VesselCall` rows) summed per
vessel, per conversation and per turn, priced with :mod:`webui.ledger.prices`.

Every figure comes from aggregate queries grouped by model family (the price of a call depends on
its adapter and model), never from a loop over the ledger's rows: a call counts as cacheable when
its prompt reaches its family's minimum length, which is one conditional sum per distinct minimum
in the price table. Only counts, hashes and causes are read; a ledger row holds no prompt text.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, Max, Min, Q, QuerySet, Sum

from webui.conf import webui_settings
from webui.ledger.bill import CacheBill, bill, call_bill, combined
from webui.ledger.prices import cache_price
from webui.models import Conversation, Vessel, VesselCall

#: How many conversations, drift calls and turns a page lists (the newest).
RECENT_CONVERSATIONS = 50
RECENT_DRIFTS = 50
CHART_TURNS = 120

TOKEN_SUMS = {
    "calls": Count("id"),
    "input": Sum("input_tokens", default=0),
    "read": Sum("cache_read_tokens", default=0),
    "write": Sum("cache_write_tokens", default=0),
    "drift_turns": Count("user_message", filter=~Q(drift_section=""), distinct=True),
}


def _minimums() -> set[int]:
    """Every minimum cacheable length the price table names."""
    return {
        int(row["min_cacheable_tokens"])
        for entry in webui_settings.CACHE_PRICES.values()
        for row in (entry.get("models") or {}).values()
    }


def _cacheable_sums() -> dict[str, Any]:
    return {
        f"cacheable_{minimum}": Sum("input_tokens", filter=Q(input_tokens__gte=minimum), default=0)
        for minimum in _minimums()
    }


def _priced_groups(calls: QuerySet[VesselCall], *keys: str) -> list[tuple[dict, CacheBill]]:
    """``calls`` summed per ``keys`` and model family, each group with its bill."""
    groups = calls.order_by().values(*keys, "adapter", "model")
    out = []
    for group in groups.annotate(**TOKEN_SUMS, **_cacheable_sums()):
        price = cache_price(adapter=group["adapter"], model=group["model"])
        priced = bill(
            price,
            calls=group["calls"],
            input_tokens=group["input"],
            cache_read_tokens=group["read"],
            cache_write_tokens=group["write"],
            cacheable_input_tokens=group[f"cacheable_{price.min_cacheable_tokens}"],
        )
        out.append((group, priced))
    return out


@dataclass(frozen=True)
class BillRow:
    """One line of the page: what it is about, its bill and its turns with drift."""

    key: Any
    label: str
    bill: CacheBill
    drift_turns: int
    detail: str = ""


def _rows(groups: list[tuple[dict, CacheBill]], key: str) -> dict[Any, tuple[CacheBill, int]]:
    parts: dict[Any, list[CacheBill]] = defaultdict(list)
    drifts: dict[Any, int] = defaultdict(int)
    for group, priced in groups:
        parts[group[key]].append(priced)
        drifts[group[key]] += group["drift_turns"]
    return {k: (combined(bills), drifts[k]) for k, bills in parts.items()}


def bill_by_vessel(calls: QuerySet[VesselCall] | None = None) -> list[BillRow]:
    """The ledger per vessel, busiest first (calls whose vessel was deleted under ``None``)."""
    calls = VesselCall.objects.all() if calls is None else calls
    rows = _rows(_priced_groups(calls, "vessel_id"), "vessel_id")
    vessels = Vessel.objects.in_bulk([k for k in rows if k is not None])
    out = []
    for key, (priced, drifts) in rows.items():
        vessel = vessels.get(key)
        label = vessel.name if vessel else "(deleted vessel)"
        detail = f"{vessel.adapter} · {vessel.model}" if vessel else ""
        out.append(BillRow(key=key, label=label, bill=priced, drift_turns=drifts, detail=detail))
    return sorted(out, key=lambda row: (-row.bill.calls, row.label))


def bill_by_conversation(limit: int = RECENT_CONVERSATIONS) -> list[BillRow]:
    """The ledger of the ``limit`` conversations with the newest calls, newest first; each is
    labelled as the admin shows it: soul, vessel and date, never its title (the member's words)."""
    recent = list(
        VesselCall.objects.order_by()
        .values("conversation_id")
        .annotate(last=Max("id"))
        .order_by("-last")
        .values_list("conversation_id", flat=True)[:limit]
    )
    groups = _priced_groups(
        VesselCall.objects.filter(conversation_id__in=recent), "conversation_id"
    )
    rows = _rows(groups, "conversation_id")
    conversations = Conversation.objects.select_related("soul", "vessel").in_bulk(recent)
    return [
        BillRow(
            key=key,
            label=str(conversations[key]),
            bill=rows[key][0],
            drift_turns=rows[key][1],
            detail=conversations[key].get_kind_display(),
        )
        for key in recent
        if key in rows and key in conversations
    ]


@dataclass(frozen=True)
class DriftCall:
    """A call whose prefix did not extend the previous one's: where, what moved, why, and what
    the call cost against no cache (negative: lost)."""

    call: VesselCall
    bill: CacheBill


def recent_drifts(limit: int = RECENT_DRIFTS) -> list[DriftCall]:
    """The ``limit`` newest calls with drift, newest first."""
    calls = (
        VesselCall.objects.exclude(drift_section="")
        .select_related("conversation__soul", "conversation__vessel", "vessel")
        .order_by("-id")[:limit]
    )
    return [DriftCall(call=call, bill=_call_bill(call)) for call in calls]


def _call_bill(call: VesselCall) -> CacheBill:
    return call_bill(
        cache_price(adapter=call.adapter, model=call.model),
        input_tokens=call.input_tokens,
        cache_read_tokens=call.cache_read_tokens,
        cache_write_tokens=call.cache_write_tokens,
    )


@dataclass(frozen=True)
class TurnShare:
    """One turn of a conversation: its number, the share of its cacheable input read from the
    cache (``None``: below the minimum cacheable length), and whether it drifted."""

    number: int
    share: float | None
    drifted: bool
    input_tokens: int


def turn_shares(conversation: Conversation, limit: int = CHART_TURNS) -> list[TurnShare]:
    """The cached share of each of ``conversation``'s turns (its last ``limit``), oldest first.

    A turn's calls are one model family in practice; its minimum is the conversation's newest
    call's family (one query per distinct minimum is not worth it for a chart)."""
    calls = VesselCall.objects.filter(conversation=conversation)
    last = calls.order_by("-id").values("adapter", "model").first()
    if last is None:
        return []
    minimum = cache_price(adapter=last["adapter"], model=last["model"]).min_cacheable_tokens
    turns = (
        calls.order_by()
        .values("user_message_id")
        .annotate(
            first=Min("id"),
            input=Sum("input_tokens", default=0),
            read=Sum("cache_read_tokens", default=0),
            cacheable=Sum("input_tokens", filter=Q(input_tokens__gte=minimum), default=0),
            drifts=Count("id", filter=~Q(drift_section="")),
        )
        .order_by(F("first").desc())[:limit]
    )
    rows = list(reversed(turns))
    offset = max(0, _turn_count(calls) - len(rows))
    return [
        TurnShare(
            number=offset + index + 1,
            share=min(1.0, row["read"] / row["cacheable"]) if row["cacheable"] else None,
            drifted=row["drifts"] > 0,
            input_tokens=row["input"],
        )
        for index, row in enumerate(rows)
    ]


def _turn_count(calls: QuerySet[VesselCall]) -> int:
    return calls.values("user_message_id").distinct().count()


def total(rows: Iterable[BillRow]) -> CacheBill:
    """The bill of every row together."""
    return combined(row.bill for row in rows)
