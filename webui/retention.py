"""Retention: rows that would otherwise grow without bound are deleted once past their window.

The host keeps unattended runs with their conversations, and temporary conversations; each window
is a number of days in ``webui.conf`` (``PRUNE_*_DAYS``), where 0 keeps those rows for ever. A
plug-in adds its own rows through :meth:`webui.extensions.TurnExtension.prune_targets` (the
contract, :class:`~webui.prune_windows.PruneTarget`, is in :mod:`webui.prune_windows`).
Everything a conversation owns (its messages, and a plug-in's rows with a cascading key, such as
pin records) goes with it. ``manage.py prune`` runs this by hand; the scheduler runs it once a day
(:func:`run_daily_prune`).
"""

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from webui.conf import webui_settings
from webui.extensions import registered_extensions
from webui.models import Conversation, DailyChore, UnattendedRun
from webui.prune_windows import PruneTarget as PruneTarget
from webui.prune_windows import PruneWindow, RetentionError, targets_past_windows

logger = logging.getLogger(__name__)

PRUNE_CHORE = "prune"

_UNATTENDED = Conversation.Kind.JOB, Conversation.Kind.WAKE


def unattended_window(label: str, rows: Callable[[datetime], QuerySet[Any]]) -> PruneWindow:
    """A window of ``PRUNE_UNATTENDED_RUNS_DAYS``: one setting keeps a run and its conversation
    for the same time, counted from when the run started."""
    return PruneWindow(
        label=label,
        rule="started more than {window} ago",
        setting="PRUNE_UNATTENDED_RUNS_DAYS",
        rows=rows,
    )


#: The host's own rows and their windows (``WEBUI_PRUNE_*_DAYS``).
HOST_WINDOWS = (
    unattended_window(
        "unattended conversations",
        lambda cutoff: Conversation.objects.filter(kind__in=_UNATTENDED, created_at__lt=cutoff),
    ),
    unattended_window(
        "unattended runs", lambda cutoff: UnattendedRun.objects.filter(started_at__lt=cutoff)
    ),
    PruneWindow(
        label="temporary conversations",
        rule="quiet for more than {window}",
        setting="PRUNE_TEMPORARY_DAYS",
        rows=lambda cutoff: Conversation.objects.filter(
            temporary=True, created_at__lt=cutoff
        ).exclude(messages__created_at__gte=cutoff),
    ),
)


def prune_targets(*, now: datetime) -> list[PruneTarget]:
    """Every target, the host's and each registered extension's, with every window checked
    before any row is touched."""
    targets = targets_past_windows(HOST_WINDOWS, settings=webui_settings, prefix="WEBUI_", now=now)
    for extension in registered_extensions():
        targets.extend(extension.prune_targets(now=now))
    return targets


def delete_in_batches(
    target: PruneTarget, *, batch_size: int, advance: Callable[[int], Any] = lambda n: None
) -> int:
    """Delete the target's rows ``batch_size`` at a time, each batch in its own transaction (so no
    lock is held for long), calling ``advance`` after each; returns how many were deleted."""
    if target.queryset is None:
        return 0
    model = target.queryset.model
    deleted = 0
    while True:
        batch = list(target.queryset.order_by().values_list("pk", flat=True)[:batch_size])
        if not batch:
            return deleted
        with transaction.atomic():
            _, per_model = model._base_manager.filter(pk__in=batch).delete()
        removed = per_model.get(model._meta.label, 0)
        if not removed:  # nothing could be deleted: stop rather than spin
            return deleted
        deleted += removed
        advance(removed)


def prune(*, now: datetime | None = None, batch_size: int | None = None) -> dict[str, int]:
    """Delete every row past its window; returns how many of each kind (only kinds with any)."""
    size = batch_size or webui_settings.PRUNE_BATCH_SIZE
    if not isinstance(size, int) or size < 1:
        raise RetentionError(f"WEBUI_PRUNE_BATCH_SIZE must be at least 1, not {size!r}.")
    counts: dict[str, int] = {}
    for target in prune_targets(now=now or timezone.now()):
        deleted = delete_in_batches(target, batch_size=size)
        if deleted:
            counts[target.label] = counts.get(target.label, 0) + deleted
    return counts


def claim_today(chore: str, *, now: datetime) -> bool:
    """Take today's run of ``chore`` (a local calendar day); False if it already ran today.

    A conditional update, so of several schedulers one wins; the day is taken before the chore
    runs, so a chore that fails is tried again the next day, not on every tick.
    """
    today = timezone.localdate(now)
    DailyChore.objects.get_or_create(name=chore)
    return bool(
        DailyChore.objects.filter(name=chore)
        .exclude(last_day=today)
        .update(last_day=today, last_started_at=now, last_finished_at=None)
    )


def run_daily_prune(*, now: datetime | None = None) -> dict[str, Any] | None:
    """Prune once per local calendar day: the counts when this call ran it, ``None`` when the
    day's prune had already run. A failure is logged and recorded on the chore, never raised."""
    now = now or timezone.now()
    if not claim_today(PRUNE_CHORE, now=now):
        return None
    try:
        result: dict[str, Any] = prune(now=now)
    except Exception as exc:
        logger.exception("The daily prune failed; it runs again tomorrow.")
        result = {"error": f"{type(exc).__name__}: {exc}"}
    DailyChore.objects.filter(name=PRUNE_CHORE).update(
        last_finished_at=timezone.now(), last_result=result
    )
    return result
