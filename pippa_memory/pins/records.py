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

Cause = PinRecord.Cause

#: Why a conversation may be pinned absent for life: a decision, not a failure.
ABSENT_BY_CHOICE = frozenset({"memory_disabled", "temporary", "engine_unconfigured"})
#: The pin history's reason for a conversation pinned at a later turn, once the engine answered.
ENGINE_RECOVERED = "engine_recovered"
#: The pin history's reason for a conversation pinned at a later try after its block was refused
#: for its size (:data:`ASKED_AGAIN_SPACED`).
RETRIED = "retried"
#: The pin history's reason for a re-pin because the pinned block held an item since forgotten.
FORGOTTEN = "forgotten"
#: The pin history's reason for a re-pin after the block's item was made private to its sayer.
MADE_PRIVATE = "made_private"
#: Why a conversation is pinned absent when the engine's block still held a forgotten item.
STALE_BLOCK = "stale_block"
#: Why a conversation is pinned absent when the engine sent, for a revision stored here, a block
#: with other text: a contract failure (a revision names one state for ever), so neither is pinned.
REVISION_CONFLICT = "revision_conflict"


#: The absent causes a later turn asks the engine again for only every
#: ``PIPPA_MEMORY_ABSENT_RETRY_SECONDS``: the engine answered, so the breaker does not guard them,
#: and asking at every turn would fetch the same refused block at every turn.
ASKED_AGAIN_SPACED = frozenset({Cause.BLOCK_TOO_LARGE})

_CAUSE_OF_CLIENT_REASON = {
    "connection_failed": Cause.UNREACHABLE,
    "timeout": Cause.UNREACHABLE,
    "breaker_open": Cause.UNREACHABLE,
    "request_failed": Cause.UNREACHABLE,
    "http_error": Cause.ENGINE_ERROR,
    "redirect": Cause.ENGINE_ERROR,
    "http_408": Cause.ENGINE_ERROR,
    "http_429": Cause.ENGINE_ERROR,
    "http_410": Cause.GONE,
    "too_large": Cause.ANSWER_TOO_LARGE,
    "wrong_shape": Cause.UNUSABLE_ANSWER,
    "invalid_json": Cause.UNUSABLE_ANSWER,
    "unencodable_text": Cause.UNUSABLE_ANSWER,
    "wrong_soul": Cause.UNUSABLE_ANSWER,
    "wrong_viewer": Cause.UNUSABLE_ANSWER,
}


def cause_of(*, outcome: str, reason: str) -> str:
    """The kind of a pin record's ``reason`` (:class:`~pippa_memory.models.PinRecord.Cause`):
    what the admin filters by and the member's panel words. A reason no kind names is an engine
    error for an absent pin (an ``http_<status>`` refusal, say), an admin's for a re-pin."""
    if outcome == PinRecord.Outcome.PINNED:
        if reason in Cause.values and reason not in ABSENT_BY_CHOICE:
            return reason
        return Cause.FIRST_PIN
    if outcome == PinRecord.Outcome.REPIN_REQUESTED:
        known = {FORGOTTEN, MADE_PRIVATE, Cause.MEMBER_REFRESH}
        return reason if reason in known else Cause.ADMIN_REPIN
    if reason in _CAUSE_OF_CLIENT_REASON:
        return _CAUSE_OF_CLIENT_REASON[reason]
    return reason if reason in Cause.values else Cause.ENGINE_ERROR


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
            outcome = PinRecord.Outcome.PINNED if revision else PinRecord.Outcome.ABSENT
            PinRecord.objects.create(
                conversation=conversation,
                soul=conversation.soul,
                outcome=outcome,
                revision=revision or "",
                sha256=sha256,
                reason=reason,
                cause=cause_of(outcome=outcome, reason=reason),
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
            cause=cause_of(outcome=PinRecord.Outcome.REPIN_REQUESTED, reason=reason),
            requested_by=requested_by,
        )
        Conversation.objects.filter(pk=conversation.pk).update(pinned_head=None, pinned_at=None)
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return record
