"""A forgotten item's text, purged from the copies this side keeps outside pinned blocks.

Pinned blocks are reached by item id (:mod:`pippa_memory.pins.forgetting` re-pins their chats,
and every turn checks its block against the tombstones). Three other copies carry the text with no
item ids, so a forget finds them by the text itself, at the moment it knows it (the item as the
engine listed it just before the change), and never stores it:

* an unattended run's bundle or brief (:class:`~pippa_memory.models.UnattendedMemory`): a run
  whose stored text holds the item's text loses that row, whole (which line came from which item
  cannot be told without ids, so the purge is conservative; the run's record keeps its revision
  and sha256, never the text);
* a background answer that rode a reply (:class:`~pippa_memory.models.PendingAsk` ``answer``):
  one that quotes the item's text is replaced by words saying so;
* a turn event not yet delivered, or dead and so revivable (:class:`~pippa_memory.models.OutboxEvent`
  ``payload``): a ``remember`` of the text is dropped from its tool uses (delivered, it would make
  the engine learn again what the member just asked it to forget), and the text is cut out of
  every other string (the reply, a recall's output) as ``[forgotten]``. An event a delivery worker
  has already claimed is on the wire and goes as it was.

What is not reached here: the conversation's own messages (what was said stays until the
conversation is deleted, ``docs/memory-page.md``). An answer the engine wrote before the forget
that has not ridden a turn yet is the engine's until fetched; it names the items it was made from,
and when it holds one tombstoned here it is withheld
(:func:`pippa_memory.turn.answers.withhold_tombstoned`).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pippa_memory.models import OutboxEvent, PendingAsk, UnattendedMemory
from pippa_memory.turn.tool import TOOL_NAME
from webui.models import Soul

#: What a forgotten text becomes in a turn event not yet delivered.
CUT_OUT = "[forgotten]"
#: What a background answer that quoted a forgotten item says instead.
ANSWER_WITHHELD = "(This answer held a memory that has since been forgotten.)"


@dataclass(frozen=True)
class Purged:
    """How many copies a forget reached: unattended runs' memory deleted, background answers
    replaced, turn events rewritten."""

    unattended: int = 0
    answers: int = 0
    events: int = 0


def usable_texts(texts: Iterable[str]) -> list[str]:
    """The texts worth looking for: stripped, and none empty (which every text would hold)."""
    return sorted({text.strip() for text in texts if text and text.strip()})


def holds_any(text: str, texts: list[str]) -> bool:
    return any(forgotten in text for forgotten in texts)


def purge_forgotten_text(
    *, soul: Soul, texts: Iterable[str], drop_from_events: bool = True
) -> Purged:
    """Purge ``texts`` (the forgotten items' own words) from ``soul``'s unattended runs' memory,
    its background answers and, with ``drop_from_events``, its turn events not yet delivered."""
    wanted = usable_texts(texts)
    if not wanted:
        return Purged()
    return Purged(
        unattended=purge_unattended(soul=soul, texts=wanted),
        answers=purge_answers(soul=soul, texts=wanted),
        events=purge_events(soul=soul, texts=wanted) if drop_from_events else 0,
    )


def purge_made_private(*, soul: Soul, texts: Iterable[str], owner: str) -> Purged:
    """An item made private leaves every copy that others read: unattended runs (household only)
    and background answers in conversations that are not ``owner``'s. Turn events stay: the
    owner's own remember is theirs, and another member's is that member's own words."""
    wanted = usable_texts(texts)
    if not wanted:
        return Purged()
    others = PendingAsk.objects.filter(conversation__soul=soul).exclude(
        conversation__viewer_id=owner
    )
    return Purged(
        unattended=purge_unattended(soul=soul, texts=wanted),
        answers=replace_answers(others, texts=wanted),
    )


def purge_unattended(*, soul: Soul, texts: list[str]) -> int:
    """Delete the stored bundle or brief of every run of ``soul`` whose text holds one of
    ``texts``."""
    rows = UnattendedMemory.objects.filter(conversation__soul=soul).only("id", "text")
    doomed = [row.pk for row in rows.iterator() if holds_any(row.text, texts)]
    deleted, _ = UnattendedMemory.objects.filter(pk__in=doomed).delete()
    return deleted


def purge_answers(*, soul: Soul, texts: list[str]) -> int:
    return replace_answers(PendingAsk.objects.filter(conversation__soul=soul), texts=texts)


def replace_answers(asks: Any, *, texts: list[str]) -> int:
    """Replace the stored answer of each of ``asks`` that quotes one of ``texts``."""
    quoting = [
        ask.pk
        for ask in asks.exclude(answer="").only("id", "answer").iterator()
        if holds_any(ask.answer, texts)
    ]
    return PendingAsk.objects.filter(pk__in=quoting).update(answer=ANSWER_WITHHELD)


def purge_events(*, soul: Soul, texts: list[str]) -> int:
    """Rewrite ``soul``'s undelivered turn events (pending or dead) that hold one of ``texts``."""
    rewritten = 0
    undelivered = OutboxEvent.objects.undelivered(include_dead=True).filter(soul=soul)
    for event_id, payload in undelivered.values_list("id", "payload").iterator():
        cleaned = without_texts(payload, texts)
        if cleaned != payload:
            rewritten += (
                OutboxEvent.objects.undelivered(include_dead=True)
                .filter(pk=event_id)
                .update(payload=cleaned)
            )
    return rewritten


def is_remember_of(use: Any, texts: list[str]) -> bool:
    """Whether a turn event's tool use is a memory ``remember`` whose text holds one of ``texts``."""
    if not isinstance(use, dict) or use.get("name") != TOOL_NAME:
        return False
    tool_input = use.get("input")
    if not isinstance(tool_input, dict) or tool_input.get("verb") != "remember":
        return False
    text = tool_input.get("text")
    return isinstance(text, str) and holds_any(text, texts)


def without_texts(value: Any, texts: list[str]) -> Any:
    """``value`` (a turn event's payload, or any part of it) with every ``remember`` of ``texts``
    dropped from its ``tool_uses`` and ``texts`` cut out of every other string."""
    if isinstance(value, str):
        for text in texts:
            value = value.replace(text, CUT_OUT)
        return value
    if isinstance(value, list):
        return [without_texts(inner, texts) for inner in value]
    if isinstance(value, dict):
        cleaned = {}
        for key, inner in value.items():
            if key == "tool_uses" and isinstance(inner, list):
                inner = [use for use in inner if not is_remember_of(use, texts)]
            cleaned[key] = without_texts(inner, texts)
        return cleaned
    return value
