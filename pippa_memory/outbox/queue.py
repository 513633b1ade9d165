"""The outbox row is the queue: claim due events in one statement, record their outcomes in bulk.

A claim is one ``UPDATE … RETURNING`` that pushes the claimed rows' ``next_attempt_at`` to the end
of a lease and hands back what delivery needs, so no transaction stays open over the network and
no second query reads the rows. On PostgreSQL the rows are picked ``FOR UPDATE SKIP LOCKED``, so
workers on any number of hosts never wait for, or take, each other's rows; SQLite (3.35 or newer)
serialises writers, so its single statement is atomic as it stands. A worker killed mid-delivery
simply never records anything: its rows are due again when the lease ends.

Outcomes are written back with one ``UPDATE`` per kind of outcome in the batch (delivered, retry,
dead), each matching only rows still held by this claim (``next_attempt_at`` is still the lease
end), so an operator's *retry now* during the delivery wins and the event is sent again (the
engine de-duplicates on the id).
"""

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import Case, F, Value, When
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from pippa_memory.models import OutboxEvent


@dataclass(frozen=True)
class ClaimedEvent:
    """One claimed attempt: what to send, and what retrying it depends on."""

    id: str
    payload: dict[str, Any]
    attempts: int
    created_at: datetime
    revived_at: datetime | None
    #: The lease end the claim wrote; only this claim's holder may record the outcome.
    lease_until: datetime


@dataclass(frozen=True)
class Outcome:
    """What became of one claimed attempt, ready to be written back."""

    event: ClaimedEvent
    #: "delivered", "retry", "dead", or "released" (not sent: handed back, due at once).
    kind: str
    status: int | None
    error: str = ""
    next_attempt_at: datetime | None = None


def _aware(value: Any) -> datetime | None:
    """A datetime column as ``RETURNING`` gives it (text on SQLite), as an aware datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        value = parse_datetime(value)
    return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)


def _claim_sql() -> str:
    table = connection.ops.quote_name(OutboxEvent._meta.db_table)
    skip_locked = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    return (
        f"UPDATE {table} SET next_attempt_at = %s WHERE id IN ("
        f"SELECT id FROM {table} WHERE status = %s AND next_attempt_at <= %s "
        f"ORDER BY next_attempt_at LIMIT %s{skip_locked}) "
        "RETURNING id, payload, attempts, created_at, revived_at"
    )


def claim_due(*, now: datetime, until: datetime, limit: int) -> list[ClaimedEvent]:
    """Claim up to ``limit`` due events (oldest due first), holding each until ``until``; one
    statement, whatever the backend."""
    adapt = connection.ops.adapt_datetimefield_value
    params: list[Any] = [adapt(until), OutboxEvent.Status.PENDING, adapt(now), limit]
    with connection.cursor() as cursor:
        cursor.execute(_claim_sql(), params)
        rows = cursor.fetchall()
    return [
        ClaimedEvent(
            id=str(uuid.UUID(str(row[0]))),
            payload=json.loads(row[1]) if isinstance(row[1], str | bytes) else row[1],
            attempts=row[2],
            created_at=_aware(row[3]),
            revived_at=_aware(row[4]),
            lease_until=until,
        )
        for row in rows
    ]


def _case(outcomes: list[Outcome], column: str, value: Any) -> Case | Cast:
    """One column's new value per row, for a bulk update of rows that each get their own (cast
    where the backend needs it, as ``bulk_update`` does: PostgreSQL types an all-NULL CASE as
    text)."""
    field = OutboxEvent._meta.get_field(column)
    case = Case(
        *(When(pk=o.event.id, then=Value(value(o), output_field=field)) for o in outcomes),
        output_field=field,
    )
    return (
        Cast(case, output_field=field)
        if connection.features.requires_casted_case_in_updates
        else case
    )


def record_outcomes(outcomes: list[Outcome], *, now: datetime) -> None:
    """Write back a batch's outcomes: one ``UPDATE`` for each kind of outcome present (delivered
    ones take one per distinct status, which is almost always one)."""
    by_kind: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_kind.setdefault(outcome.kind, []).append(outcome)
    if not outcomes:
        return
    lease_until = outcomes[0].event.lease_until
    held = OutboxEvent.objects.filter(
        next_attempt_at=lease_until, status=OutboxEvent.Status.PENDING
    )
    delivered: dict[int | None, list[str]] = {}
    for outcome in by_kind.get("delivered", []):
        delivered.setdefault(outcome.status, []).append(outcome.event.id)
    for status, ids in delivered.items():
        held.filter(pk__in=ids).update(
            status=OutboxEvent.Status.DELIVERED,
            attempts=F("attempts") + 1,
            last_status=status,
            delivered_at=now,
            last_error="",
        )
    for kind in ("retry", "dead"):
        failed = by_kind.get(kind, [])
        if not failed:
            continue
        fields: dict[str, Any] = {
            "attempts": F("attempts") + 1,
            "last_status": _case(failed, "last_status", lambda o: o.status),
            "last_error": _case(failed, "last_error", lambda o: o.error[:2000]),
        }
        if kind == "retry":
            fields["next_attempt_at"] = _case(
                failed, "next_attempt_at", lambda o: o.next_attempt_at
            )
        else:
            fields["status"] = OutboxEvent.Status.DEAD
        held.filter(pk__in=[o.event.id for o in failed]).update(**fields)
    released = [o.event.id for o in by_kind.get("released", [])]
    if released:
        held.filter(pk__in=released).update(next_attempt_at=now)
