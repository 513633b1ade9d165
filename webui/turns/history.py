"""A conversation's persisted history, as every prompt replays it, read once per process.

Message rows are append-only: a turn, a retry and a stopped reply each add rows (each the next
``sequence``, assigned under the conversation row's lock, so a row seen means every earlier one
was committed), and nothing in the app edits a row or deletes one alone; deleting a conversation
takes its rows with it. So a process keeps each conversation's history as it last read it
(:data:`KEPT`, the most recent :data:`KEPT_MAX` conversations) and at the next turn reads only
the rows added since, as plain values straight into :class:`~webui.prompt.types.HistoryMessage`, never
as model instances. A row saved again or deleted through the model in this process
(:meth:`webui.models.Message.save`, ``delete``) drops its conversation's entry (:func:`forget`);
one changed behind the model's back (SQL, another process's ``QuerySet.update``) is not seen
until the entry goes, which is why nothing may do that (the admin shows messages read only).
The bytes are the same either way: ``tests/host/test_history.py`` proves it over a long
conversation with tool rounds.
"""

import threading
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webui.prompt.types import HistoryMessage, ToolRound, ToolUse

if TYPE_CHECKING:
    from webui.models import Conversation, Message

#: The columns a history message is built from, in this order.
COLUMNS = ("sequence", "id", "role", "content", "tool_uses", "rounds")


@dataclass(frozen=True)
class KeptHistory:
    """One conversation's rows as read so far: their sequences and messages, oldest first."""

    sequences: tuple[int, ...]
    messages: tuple[HistoryMessage, ...]


KEPT: "OrderedDict[str, KeptHistory]" = OrderedDict()
KEPT_MAX = 256
_lock = threading.Lock()


def forget(conversation_id: Any) -> None:
    """Drop what this process keeps of a conversation's history (a row of it changed)."""
    with _lock:
        KEPT.pop(str(conversation_id), None)


def history_message(
    *, id: Any, role: str, content: str, tool_uses: list[Any], rounds: list[Any]
) -> HistoryMessage:
    """A stored row's values as the adapters replay it; tool rounds rebuilt in recorded order."""
    if role == "user":
        return HistoryMessage(id=str(id), role="user", text=content)
    uses = {
        use["id"]: ToolUse(
            id=use["id"],
            name=use["name"],
            input=use.get("input", {}),
            output=use.get("output"),
            meta=use.get("meta") or {},
        )
        for use in tool_uses
    }
    replayed = []
    for recorded in rounds:
        replayed.append(
            ToolRound(
                text=recorded.get("text", ""),
                tool_uses=tuple(uses[i] for i in recorded.get("tool_use_ids", []) if i in uses),
            )
        )
    claimed = {use.id for tool_round in replayed for use in tool_round.tool_uses}
    unclaimed = tuple(use for use_id, use in uses.items() if use_id not in claimed)
    if unclaimed:
        # A row written without its rounds (from the admin, say): replay its tool uses as one round.
        replayed.append(ToolRound(text="", tool_uses=unclaimed))
    return HistoryMessage(id=str(id), role="assistant", text=content, rounds=tuple(replayed))


def read_rows(conversation: "Conversation", *, after: int, before: int) -> KeptHistory:
    """The rows of ``conversation`` with ``after < sequence < before``, as values, oldest first."""
    rows = (
        conversation.messages.filter(sequence__gt=after, sequence__lt=before)
        .order_by("sequence")
        .values_list(*COLUMNS)
    )
    sequences, messages = [], []
    for sequence, *values in rows:
        sequences.append(sequence)
        messages.append(history_message(**dict(zip(COLUMNS[1:], values, strict=True))))
    return KeptHistory(tuple(sequences), tuple(messages))


def conversation_history(
    conversation: "Conversation", *, before: "Message"
) -> tuple[HistoryMessage, ...]:
    """Every stored message of ``conversation`` that comes before ``before``, oldest first: what
    this process kept of it, plus the rows added since (one query)."""
    key = str(conversation.pk)
    with _lock:
        kept = KEPT.get(key) or KeptHistory((), ())
    last = kept.sequences[-1] if kept.sequences else 0
    if before.sequence > last + 1:
        added = read_rows(conversation, after=last, before=before.sequence)
        kept = KeptHistory(kept.sequences + added.sequences, kept.messages + added.messages)
        with _lock:
            KEPT[key] = kept
            KEPT.move_to_end(key)
            while len(KEPT) > KEPT_MAX:
                KEPT.popitem(last=False)
    return kept.messages[: bisect_left(kept.sequences, before.sequence)]
