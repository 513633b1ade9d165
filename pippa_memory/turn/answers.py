"""The background ask: answers the engine found later ride the next turn's per-turn slot.

At each turn, if the conversation has questions out, ready answers are fetched under the turn's
budget and the breaker and put in the slot; they are acknowledged after the assistant row is
saved, so each rides exactly one turn. An answer whose acknowledgement failed is offered again by
the engine, but never rides a second turn: the reply that carried it is recorded, so it is only
acknowledged again (:func:`split_ridden`). An answer is checked like a block: it names the ids of
the memories it was made from (contract v3 ``items``), and one that holds an item tombstoned here
for the conversation's member (forgotten, or made private to someone else, whether or not the
engine confirmed it, and whenever the question was asked) does not ride: its text is withheld and
the slot and the page say so plainly (:func:`withhold_tombstoned`). Whether questions are out is a flag on the conversation row
(:data:`QUESTIONS_OUT`), raised in the transaction that records an ask and lowered in the one that
records its last answer, so a turn learns it with no query of its own. A crash before the reply
is saved makes them ride the next turn instead: never lost. Their text
is never written into the conversation; the plug-in keeps it on its own row
(:class:`~pippa_memory.models.PendingAsk`), with the reply that carried it, recorded in that
reply's transaction, so the chat page can show the conversation's member what rode the reply
(:mod:`pippa_memory.turn.notes`).
"""

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from pippa_memory.conf import memory_settings
from pippa_memory.engine import contract
from pippa_memory.engine.client import call_in_turn
from pippa_memory.engine.members import viewer_id
from pippa_memory.models import PendingAsk
from pippa_memory.pins.tombstones import tombstoned_items
from webui.models import Conversation, Message
from webui.text.canonical import without_nul

logger = logging.getLogger(__name__)


#: The conversation's flag while any of its asks waits for its answer.
QUESTIONS_OUT = "pippa_memory.questions_out"
#: What rides, and is kept, instead of an answer made from a memory since forgotten or made private.
ANSWER_WITHHELD_AFTER_FORGET = (
    "(This answer was withheld: it was made from a memory that has since been forgotten or made "
    "private. Ask again if it is still wanted.)"
)


def has_questions_out(conversation: Conversation) -> bool:
    """Whether ``conversation`` has asks whose answers have not ridden a turn; read from the row."""
    return conversation.has_extension_flag(QUESTIONS_OUT)


def record_ask(*, conversation: Conversation, ask_id: str, question: str) -> None:
    """Record an ask the engine took, and raise the conversation's :data:`QUESTIONS_OUT`, together."""
    with transaction.atomic():
        PendingAsk.objects.get_or_create(
            ask_id=ask_id, defaults={"conversation": conversation, "question": question}
        )
        conversation.set_extension_flag(QUESTIONS_OUT, raised=True)


def fetch_ready_answers(conversation: Conversation, *, budget: float) -> list[dict[str, Any]]:
    """Answers ready for ``conversation``; empty when there are none or the engine is absent."""
    if budget <= 0 or not has_questions_out(conversation):
        return []
    path = f"/v1/conversations/{conversation.id}/answers"
    outcome = call_in_turn("GET", path, schema=contract.ANSWERS, budget=budget)
    if not outcome.ok:
        return []
    return outcome.data["answers"]


def split_ridden(
    conversation: Conversation, answers: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``answers`` split into those that may ride this turn and those that already rode one (their
    acknowledgement failed, so the engine offers them again): a ridden answer never rides another
    turn, since a memory forgotten in between may be in it; it is only acknowledged again. One
    query."""
    ridden = set(
        PendingAsk.objects.filter(
            conversation=conversation,
            ask_id__in=[item["ask_id"] for item in answers],
            delivered_with__isnull=False,
        ).values_list("ask_id", flat=True)
    )
    fresh = [item for item in answers if item["ask_id"] not in ridden]
    fresh = withhold_tombstoned(conversation, fresh)
    return fresh, [item for item in answers if item["ask_id"] in ridden]


def withhold_tombstoned(
    conversation: Conversation, answers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``answers`` with the text of each one made from an item tombstoned for ``conversation``'s
    member (a forget, or an item made private to someone else) replaced by
    :data:`ANSWER_WITHHELD_AFTER_FORGET`. One query, none for no answers."""
    held = [item_id for item in answers for item_id in item["items"]]
    gone = tombstoned_items(
        soul_id=conversation.soul_id, viewer=viewer_id(conversation) or "", items=held
    )
    if not gone:
        return answers
    return [
        {**item, "answer": ANSWER_WITHHELD_AFTER_FORGET}
        if gone.intersection(item["items"])
        else item
        for item in answers
    ]


def slot_text(answers: list[dict[str, Any]]) -> str:
    """The per-turn slot part that carries the answers."""
    lines = ["Your memory answered questions you asked earlier (for this turn only):"]
    for item in answers:
        lines.append(f"- Q: {item['question']}\n  A: {item['answer']}")
    return "\n".join(lines)


def record_delivery(
    conversation: Conversation, answers: list[dict[str, Any]], *, reply: Message
) -> int:
    """Record each answer with the reply whose slot carried it, in the reply's transaction; an
    answer that rides again (its acknowledgement failed) stays with the first reply. Returns how
    many were recorded."""
    recorded = 0
    for item in answers:
        recorded += PendingAsk.objects.filter(
            conversation=conversation, ask_id=item["ask_id"], delivered_with__isnull=True
        ).update(delivered_with=reply, answer=without_nul(item["answer"]))
    return recorded


def acknowledge(conversation: Conversation, answers: list[dict[str, Any]]) -> bool:
    """Tell the engine these answers were delivered; False (they ride again) when it fails. After
    the reply is saved, so with a chat budget of its own: the turn's may be spent by now."""
    ids = [item["id"] for item in answers]
    path = f"/v1/conversations/{conversation.id}/answers/ack"
    result = call_in_turn("POST", path, body={"ids": ids}, budget=memory_settings.CHAT_BUDGET)
    if not result.ok:
        logger.warning(
            "Could not acknowledge %d answer(s) for %s (%s); they are acknowledged again at "
            "the next turn, never ridden again.",
            len(ids),
            conversation.pk,
            result.reason,
        )
        return False
    record_answered(conversation, ask_ids=[item["ask_id"] for item in answers])
    return True


def record_answered(conversation: Conversation, *, ask_ids: list[str]) -> None:
    """Mark these asks answered and, if none is left waiting, lower :data:`QUESTIONS_OUT`, in one
    transaction under the conversation row's lock (an ask recorded meanwhile keeps it raised)."""
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        asks = PendingAsk.objects.filter(conversation=conversation)
        asks.filter(ask_id__in=ask_ids).update(answered_at=timezone.now())
        if not asks.filter(answered_at__isnull=True).exists():
            conversation.set_extension_flag(QUESTIONS_OUT, raised=False)
