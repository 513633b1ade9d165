"""The plug-in's rows in the host's prune (``manage.py prune``, daily from the scheduler).

Brain-door audit rows (with the stored answers a repeated ``webhook-id`` gets back, long past any
signature's tolerance), delivered turn events and dead ones go after their windows
(``PRUNE_*_DAYS`` in :data:`~pippa_memory.conf.memory_settings`; 0 keeps them for ever), and so do
forget tombstones (ids only; long after any first turn that fetched a head before the forget has
finished, :mod:`pippa_memory.pins.tombstones`), and stored memory blocks that no conversation pins
(a block may hold a member's private items; it is kept only while a conversation carries it, and
for a window after it was stored, so a first turn that just stored it can still pin it). Pending
events are never pruned: they are the guarantee that a turn reaches the engine. Pin records go
after their window too, except each conversation's newest record and newest pin decision, which
its next turn reads; all of them, with pending asks and an unattended run's memory, cascade with
their conversation.
"""

from datetime import datetime

from django.db.models import CharField, Exists, Model, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Cast, Coalesce

from pippa_memory.conf import memory_settings
from pippa_memory.models import BrainCall, ItemTombstone, MemoryBlock, OutboxEvent, PinRecord
from webui.models import Conversation
from webui.prune_windows import PruneTarget, PruneWindow, targets_past_windows


def written_before_window(label: str, setting: str, model: type[Model]) -> PruneWindow:
    """The window of a model whose rows go once written (``created_at``) longer ago than it."""
    return PruneWindow(
        label=label,
        rule="older than {window}",
        setting=setting,
        rows=lambda cutoff: model.objects.filter(created_at__lt=cutoff),
    )


MEMORY_WINDOWS = (
    written_before_window("brain-door audit rows", "PRUNE_BRAIN_CALLS_DAYS", BrainCall),
    PruneWindow(
        label="delivered turn events",
        rule="delivered more than {window} ago",
        setting="PRUNE_DELIVERED_EVENTS_DAYS",
        rows=lambda cutoff: OutboxEvent.objects.filter(
            status=OutboxEvent.Status.DELIVERED, delivered_at__lt=cutoff
        ),
    ),
    PruneWindow(
        label="dead turn events",
        rule="written or revived more than {window} ago",
        setting="PRUNE_DEAD_EVENTS_DAYS",
        rows=lambda cutoff: OutboxEvent.objects.dead().filter(
            Q(revived_at__isnull=True, created_at__lt=cutoff) | Q(revived_at__lt=cutoff)
        ),
    ),
    written_before_window("forget tombstones", "PRUNE_TOMBSTONES_DAYS", ItemTombstone),
    PruneWindow(
        label="memory blocks no conversation pins",
        rule="stored more than {window} ago",
        setting="PRUNE_BLOCKS_DAYS",
        rows=lambda cutoff: unpinned_blocks(stored_before=cutoff),
    ),
    PruneWindow(
        label="pin records",
        rule="written more than {window} ago, each conversation's newest kept",
        setting="PRUNE_PIN_RECORDS_DAYS",
        rows=lambda cutoff: superseded_pin_records(written_before=cutoff),
    ),
)


def superseded_pin_records(*, written_before: datetime) -> QuerySet[PinRecord]:
    """Pin records written before ``written_before`` that a newer record of their conversation
    supersedes: never a conversation's newest record, nor its newest pin decision (a pin or an
    absent pin), which the next turn reads (why it is absent, why it re-pins)."""
    newer = PinRecord.objects.filter(conversation_id=OuterRef("conversation_id")).filter(
        Q(created_at__gt=OuterRef("created_at"))
        | Q(created_at=OuterRef("created_at"), id__gt=OuterRef("id"))
    )
    newer_decision = newer.exclude(outcome=PinRecord.Outcome.REPIN_REQUESTED)
    return (
        PinRecord.objects.filter(created_at__lt=written_before)
        .filter(Exists(newer))
        .filter(Q(outcome=PinRecord.Outcome.REPIN_REQUESTED) | Exists(newer_decision))
    )


def unpinned_blocks(*, stored_before: datetime) -> QuerySet[MemoryBlock]:
    """Stored blocks no conversation pins (same soul and revision, and the block's viewer: a
    conversation's member id, "" for one with none), stored before ``stored_before``."""
    pinning = Conversation.objects.annotate(
        viewer_key=Coalesce(Cast("viewer_id", CharField()), Value(""))
    ).filter(
        soul_id=OuterRef("soul_id"),
        pinned_head=OuterRef("revision"),
        viewer_key=OuterRef("viewer"),
    )
    return MemoryBlock.objects.filter(fetched_at__lt=stored_before).exclude(Exists(pinning))


def memory_prune_targets(*, now: datetime) -> list[PruneTarget]:
    """The plug-in's rows past their windows at ``now`` (``PIPPA_MEMORY_PRUNE_*_DAYS``)."""
    return targets_past_windows(
        MEMORY_WINDOWS, settings=memory_settings, prefix="PIPPA_MEMORY_", now=now
    )
