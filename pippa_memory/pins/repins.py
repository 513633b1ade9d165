"""Re-pins at a later turn: a pin is for life, except when it moves for a recorded reason.

Absent *by choice* (:data:`~pippa_memory.pins.records.ABSENT_BY_CHOICE`: memory off, temporary, no
engine configured, block too large) is for life. Absent because the engine failed is not: each
later turn asks the engine once more, within the turn's budget (an open breaker answers at once,
with no connection), and the first time it answers the conversation is pinned, recorded with the
reason ``engine_recovered``. That moves the front of the prompt once, one deliberate prompt-cache
miss; afterwards the pin holds for life like any other. A pinned block that must not render (the
engine answers ``410 gone``, or it holds an item since tombstoned) is re-pinned to the head,
recorded with the reason ``forgotten``: again one prompt-cache miss. An admin's re-pin
(:func:`~pippa_memory.pins.records.request_repin`) unpins, and the next turn pins afresh; the pin
history says why (:func:`repin_cause`).
"""

import logging

from pippa_memory.conf import memory_applies, memory_settings
from pippa_memory.models import PinRecord
from pippa_memory.pins.head import decide_pin, pin_as_decided
from pippa_memory.pins.records import ABSENT_BY_CHOICE, ENGINE_RECOVERED, FORGOTTEN
from webui.models import Conversation

logger = logging.getLogger(__name__)


def absent_because_engine_failed(conversation: Conversation) -> bool:
    """Whether ``conversation`` is pinned absent because the engine failed, so that this turn may
    ask the engine again. False at once (no query) when asking could not help: memory off, a
    temporary chat, no engine configured."""
    if conversation.pinned_at is None or conversation.pinned_head is not None:
        return False
    if not memory_applies(conversation) or not memory_settings.URL:
        return False
    reason = (
        PinRecord.objects.filter(conversation=conversation)
        .exclude(outcome=PinRecord.Outcome.REPIN_REQUESTED)
        .order_by("-created_at", "-id")
        .values_list("reason", flat=True)
        .first()
    )
    return reason is not None and reason not in ABSENT_BY_CHOICE


def repin_after_engine_failure(
    conversation: Conversation, *, budget: float | None = None
) -> str | None:
    """Ask the engine once more for a conversation pinned absent because it failed.

    An answer with a usable block pins the conversation (reason ``engine_recovered``): the front of
    the prompt moves once, one prompt-cache miss. An answer whose block is refused by choice (too
    large) pins it absent for life. Another failure changes nothing and writes nothing, so a long
    outage does not grow the pin history by a row a turn; the next turn asks again.

    Returns the pin's reason when this call pinned, else ``None``.
    """
    decision = decide_pin(conversation, budget=budget)
    if decision.revision is None and decision.reason not in ABSENT_BY_CHOICE:
        logger.info(
            "Conversation %s stays absent; the engine still fails (%s).",
            conversation.pk,
            decision.reason,
        )
        return None
    still_absent = Conversation.objects.filter(
        pk=conversation.pk, pinned_head__isnull=True, pinned_at=conversation.pinned_at
    )
    reason = ENGINE_RECOVERED if decision.revision is not None else decision.reason
    won = pin_as_decided(conversation, decision=decision, reason=reason, only_if=still_absent)
    return reason if won else None


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
