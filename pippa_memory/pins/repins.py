"""Re-pins at a later turn: a pin is for life, except when it moves for a recorded reason.

Absent *by choice* (:data:`~pippa_memory.pins.records.ABSENT_BY_CHOICE`: memory off, temporary, no
engine configured) is for life. Any other absence is not: a chat that pinned no memory asks the
engine again at a later turn (:func:`ask_again_if_due`), and the first time it gets a usable block
it is pinned, recorded with the reason ``engine_recovered`` (the engine failed before) or
``retried`` (its block was refused for its size before). That moves the front of the prompt once,
one deliberate prompt-cache miss; afterwards the pin holds for life like any other.

What asking again costs is bounded. After a failure the breaker counts (no answer, a 5xx, an
unusable answer) each later turn asks, and an open breaker answers at once with no connection.
After a block refused for its size the engine did answer, so the breaker does not guard it: such a
chat asks again at most once per ``PIPPA_MEMORY_ABSENT_RETRY_SECONDS`` (the try stamped on its
absent record); a forget, or the member's "Bring up to date", makes it ask at its next turn
(:func:`~pippa_memory.pins.forgetting.repin_absent_chats`). A try that fails the same way writes no
record (a long outage does not grow the pin history by a row a turn); one whose engine now answers
with a block refused for another reason records that, so the member's panel says what is true.

A pinned block that must not render (the engine answers ``410 gone``, or it holds an item since
tombstoned) is re-pinned to the head, recorded with the reason ``forgotten``: again one prompt-cache
miss. An admin's re-pin (:func:`~pippa_memory.pins.records.request_repin`) unpins, and the next
turn pins afresh; the pin history says why (:func:`repin_cause`).
"""

import logging
from datetime import timedelta

from django.utils import timezone

from pippa_memory.conf import memory_applies, memory_settings
from pippa_memory.models import PinRecord
from pippa_memory.pins.head import PinDecision, decide_pin, pin_as_decided
from pippa_memory.pins.records import (
    ABSENT_BY_CHOICE,
    ASKED_AGAIN_SPACED,
    ENGINE_RECOVERED,
    FORGOTTEN,
    RETRIED,
    Cause,
    cause_of,
)
from webui.models import Conversation

logger = logging.getLogger(__name__)

#: Absent causes the breaker counts as the engine failing: a later try that meets one of them
#: again writes nothing, whatever the absence was recorded for.
ENGINE_FAILING = frozenset({Cause.UNREACHABLE, Cause.ENGINE_ERROR})


def latest_absence(conversation: Conversation) -> PinRecord | None:
    """The record of ``conversation``'s absent pin, when memory could still come of asking again;
    ``None`` at once (no query) when it is pinned, or asking could not help (memory off, a
    temporary chat, no engine configured), and ``None`` when it is absent by choice."""
    if conversation.pinned_at is None or conversation.pinned_head is not None:
        return None
    if not memory_applies(conversation) or not memory_settings.URL:
        return None
    record = (
        PinRecord.objects.filter(conversation=conversation)
        .exclude(outcome=PinRecord.Outcome.REPIN_REQUESTED)
        .order_by("-created_at", "-id")
        .only("id", "outcome", "reason", "cause", "created_at", "tried_again_at")
        .first()
    )
    if record is None or record.outcome != PinRecord.Outcome.ABSENT:
        return None
    return None if record.reason in ABSENT_BY_CHOICE else record


def due_to_ask_again(record: PinRecord) -> bool:
    """Whether a later turn may ask the engine again for the absence ``record`` says: at every
    turn, except after a refused block (:data:`ASKED_AGAIN_SPACED`), once the spacing has passed
    since the absence or its last try."""
    if record.cause not in ASKED_AGAIN_SPACED:
        return True
    last = record.tried_again_at or record.created_at
    spacing = timedelta(seconds=memory_settings.ABSENT_RETRY_SECONDS)
    return timezone.now() - last >= spacing


def absence_to_ask_again(conversation: Conversation) -> PinRecord | None:
    """The record of ``conversation``'s absent pin when it is for a reason other than a choice
    and due to be asked again this turn (:func:`due_to_ask_again`), else ``None``. One query at
    most, none for a pinned chat."""
    record = latest_absence(conversation)
    return record if record is not None and due_to_ask_again(record) else None


def ask_again_after_absence(
    conversation: Conversation, *, absence: PinRecord, budget: float | None = None
) -> str | None:
    """Ask the engine once more for a conversation pinned absent as ``absence`` records
    (:func:`absence_to_ask_again` found it due).

    An answer with a usable block pins the conversation (``engine_recovered``, or ``retried``
    after a block refused for its size): the front of the prompt moves once, one prompt-cache
    miss. A try that fails as before writes nothing but, after a refused block, the time of the
    try; one that fails otherwise while the engine answers is recorded, so the panel says why.

    Returns the pin's reason when this call pinned, else ``None``.
    """
    record = absence
    decision = decide_pin(conversation, budget=budget)
    if decision.revision is None:
        note_failed_try(conversation, record=record, decision=decision)
        return None
    still_absent = Conversation.objects.filter(
        pk=conversation.pk, pinned_head__isnull=True, pinned_at=conversation.pinned_at
    )
    reason = RETRIED if record.cause in ASKED_AGAIN_SPACED else ENGINE_RECOVERED
    won = pin_as_decided(conversation, decision=decision, reason=reason, only_if=still_absent)
    return reason if won else None


def note_failed_try(
    conversation: Conversation, *, record: PinRecord, decision: PinDecision
) -> None:
    """What a later try that found no usable block leaves: nothing while the engine fails; a new
    absent record when the engine answered with a block refused for another cause than the
    recorded one; else, after a refused block, the time of the try on its record."""
    cause = cause_of(outcome=PinRecord.Outcome.ABSENT, reason=decision.reason)
    logger.info(
        "Conversation %s stays absent (%s); it was absent for %s.",
        conversation.pk,
        decision.reason,
        record.reason,
    )
    if cause not in ENGINE_FAILING and cause != record.cause:
        still_absent = Conversation.objects.filter(
            pk=conversation.pk, pinned_head__isnull=True, pinned_at=conversation.pinned_at
        )
        pin_as_decided(
            conversation, decision=decision, reason=decision.reason, only_if=still_absent
        )
    elif record.cause in ASKED_AGAIN_SPACED:
        PinRecord.objects.filter(pk=record.pk).update(tried_again_at=timezone.now())


def repin_after_forget(conversation: Conversation, *, budget: float | None = None) -> str | None:
    """Pin a conversation whose pinned block is gone (it held an item since forgotten) to the
    head, recorded with the reason ``forgotten``: the front of the prompt moves once, one
    prompt-cache miss, and the forgotten item never renders again. If the engine fails now, the
    conversation is pinned absent for that failure, and recovers as any such conversation does.
    Returns ``forgotten`` (the cause of the move) when this call re-pinned, else ``None``.
    """
    decision = decide_pin(conversation, budget=budget)
    still_pinned = Conversation.objects.filter(
        pk=conversation.pk, pinned_head=conversation.pinned_head, pinned_at=conversation.pinned_at
    )
    reason = FORGOTTEN if decision.revision is not None else decision.reason
    won = pin_as_decided(conversation, decision=decision, reason=reason, only_if=still_pinned)
    return FORGOTTEN if won else None


def repin_cause(conversation: Conversation) -> str:
    """Why a conversation that had turns is unpinned: a forget whose item its block held
    (``forgotten``), an admin's re-pin (``repin: <reason>``, from the latest request in its pin
    history), or a conversation from before the memory layer was installed (``first_pin``)."""
    latest = (
        PinRecord.objects.filter(conversation=conversation)
        .order_by("-created_at", "-id")
        .values_list("outcome", "reason")
        .first()
    )
    if latest is None or latest[0] != PinRecord.Outcome.REPIN_REQUESTED:
        return "first_pin"
    if latest[1] == FORGOTTEN:
        return FORGOTTEN
    return f"repin: {latest[1]}" if latest[1] else "repin"
