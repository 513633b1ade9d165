"""What a prune target is, and a window of days turned into one: the contract the host's retention
and each extension's :meth:`~webui.extensions.TurnExtension.prune_targets` share.

A leaf: it imports neither the host's models nor its extensions, so both can name it.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet


class RetentionError(ValueError):
    """A retention window or batch size that cannot be used; nothing has been deleted."""


@dataclass(frozen=True)
class PruneTarget:
    """One kind of row past its window: what it is, the rule (for people), and the rows.

    ``queryset`` is ``None`` when the window is 0 and these rows are kept for ever; ``rule`` then
    names the setting that keeps them.
    """

    label: str
    rule: str
    queryset: QuerySet[Any] | None


@dataclass(frozen=True)
class PruneWindow:
    """One kind of row kept for a window of days: ``rows(cutoff)`` are the rows past it.

    ``setting`` is the setting's key in its namespace (``PRUNE_TEMPORARY_DAYS``); ``{window}`` in
    ``rule`` becomes the window in words ("14 days").
    """

    label: str
    rule: str
    setting: str
    rows: Callable[[datetime], QuerySet[Any]]


def retention_cutoff(days: Any, *, setting: str, now: datetime) -> datetime | None:
    """The time before which rows are past a window of ``days`` (``None``: kept for ever).

    Raises :class:`RetentionError` naming ``setting`` unless ``days`` is a number, 0 or more.
    """
    if isinstance(days, bool) or not isinstance(days, int | float) or days < 0:
        raise RetentionError(
            f"{setting} must be a number of days, 0 or more (0 keeps the rows for ever), "
            f"not {days!r}."
        )
    return None if days == 0 else now - timedelta(days=days)


def describe_days(days: float) -> str:
    """A window in words: "1 day", "14 days", "0.5 days"."""
    return f"{days:g} day" if days == 1 else f"{days:g} days"


def targets_past_windows(
    windows: Iterable[PruneWindow], *, settings: Any, prefix: str, now: datetime
) -> list[PruneTarget]:
    """A target for each window, its days read from ``settings`` (an attribute per window's
    ``setting``) and named in errors and rules as the variable ``prefix + setting``.

    Every window is checked before any target is returned, so a bad one stops the prune before it
    deletes anything (:class:`RetentionError`).
    """
    targets = []
    for window in windows:
        days = getattr(settings, window.setting)
        variable = prefix + window.setting
        cutoff = retention_cutoff(days, setting=variable, now=now)
        if cutoff is None:
            targets.append(
                PruneTarget(label=window.label, rule=f"kept for ever ({variable}=0)", queryset=None)
            )
            continue
        rule = window.rule.format(window=describe_days(days))
        targets.append(PruneTarget(label=window.label, rule=rule, queryset=window.rows(cutoff)))
    return targets
