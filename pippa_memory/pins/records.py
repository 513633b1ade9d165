"""The pin and its records: every write of a conversation's pin goes with its row in the pin
history (:class:`~pippa_memory.models.PinRecord`), in one transaction.

Two actions write a pin: :func:`pin_conversation` (a revision, or absent for a reason; a chat's
first turn, a re-pin, an unattended run's bundle or brief) and :func:`request_repin` (unpin, so
the next turn pins afresh; an admin's re-pin, or a forget reaching a live conversation). The
reasons the pin history records are named here, for the modules that write and read them.
"""

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from pippa_memory.models import PinRecord
from webui.models import Conversation

#: Why a conversation may be pinned absent for life: a decision, not a failure.
ABSENT_BY_CHOICE = frozenset(
    {"memory_disabled", "temporary", "engine_unconfigured", "block_too_large"}
)
#: The pin history's reason for a conversation pinned at a later turn, once the engine answered.
ENGINE_RECOVERED = "engine_recovered"
#: The pin history's reason for a re-pin because the pinned block held an item since forgotten.
FORGOTTEN = "forgotten"
#: The pin history's reason for a re-pin after the block's item was made private to its sayer.
MADE_PRIVATE = "made_private"
#: Why a conversation is pinned absent when the engine's block still held a forgotten item.
STALE_BLOCK = "stale_block"
#: Why a conversation is pinned absent when the engine sent, for a revision stored here, a block
#: with other text: a contract failure (a revision names one state for ever), so neither is pinned.
REVISION_CONFLICT = "revision_conflict"


def pin_conversation(
    conversation: Conversation,
    *,
    revision: str | None,
    sha256: str,
    reason: str,
    latency_ms: int | None,
    only_if: QuerySet[Conversation] | None = None,
) -> bool:
    """Pin ``conversation`` to ``revision`` (``None``: pinned absent, for ``reason``) and write its
    pin record, if the conversation is still as the caller saw it: ``only_if``, by default not
    pinned yet. One conditional update in one transaction, so of two racing turns one pins and only
    that one writes a record. Afterwards the ``pinned_*`` fields are current (the winner's).

    Returns whether this call pinned. Every pin goes through here: a chat's first turn, the
    re-pin after an engine failure, and an unattended run's bundle or brief.
    """
    if only_if is None:
        only_if = Conversation.objects.filter(pk=conversation.pk, pinned_at__isnull=True)
    with transaction.atomic():
        won = bool(only_if.update(pinned_head=revision, pinned_at=timezone.now()))
        if won:
            PinRecord.objects.create(
                conversation=conversation,
                soul=conversation.soul,
                outcome=PinRecord.Outcome.PINNED if revision else PinRecord.Outcome.ABSENT,
                revision=revision or "",
                sha256=sha256,
                reason=reason,
                engine_latency_ms=latency_ms,
            )
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return won


def request_repin(*, conversation: Conversation, requested_by: object, reason: str) -> PinRecord:
    """Make the conversation pin afresh at its next turn, recording who asked and why.

    This moves the front of the prompt once: the vessel's prompt cache misses on the next turn.
    """
    with transaction.atomic(durable=True):
        record = PinRecord.objects.create(
            conversation=conversation,
            soul=conversation.soul,
            outcome=PinRecord.Outcome.REPIN_REQUESTED,
            revision=conversation.pinned_head or "",
            reason=reason,
            requested_by=requested_by,
        )
        Conversation.objects.filter(pk=conversation.pk).update(pinned_head=None, pinned_at=None)
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return record
