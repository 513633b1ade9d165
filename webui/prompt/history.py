"""A conversation's persisted history, as every prompt replays it, read once per process.

Message rows are append-only: a turn, a retry and a stopped reply each add rows (each the next
``sequence``, assigned under the conversation row's lock, so a row seen means every earlier one
was committed), and nothing edits a row or deletes one alone (the admin shows messages read only);
deleting a conversation takes its rows with it. So a process caches each conversation's history as
it last read it (:data:`HISTORY_CACHE`) and at the next turn reads only the rows added since, as
plain values straight into :class:`~webui.prompt_types.HistoryMessage`, never as model instances.
The bytes are the same either way: ``tests/webui/prompt/test_history.py`` proves it over a long
conversation with tool rounds.

The cache is bounded in conversations, in bytes and in idle time (``WEBUI_HISTORY_CACHE_*``,
read when the process starts). A deleted conversation's history leaves it at once in the process
that deleted it, by whatever path (the delete service, the admin, its member's account deleted:
:func:`drop_deleted_history` receives every ``post_delete``), and in every other process at that
process's next use of the cache: each delete, once committed, writes a new deletions version to
the site's shared cache (``WEBUI_CACHE_URL``), and every use reads it (one cache read) and, when
it moved, drops the kept conversations that no longer exist (one query). Where the shared cache
is a process's own (``locmem://``), other processes' copies go once idle for
``WEBUI_HISTORY_CACHE_IDLE_SECONDS``.
"""

import threading
import uuid
from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db import transaction

from webui.bounded_cache import CacheFromSettings, text_size
from webui.conf import webui_settings
from webui.models import Conversation
from webui.prompt_types import HistoryMessage, ToolRound, ToolUse

if TYPE_CHECKING:
    from webui.models import Message

#: The columns a history message is built from, in this order.
COLUMNS = ("sequence", "id", "role", "content", "tool_uses", "rounds")


@dataclass(frozen=True)
class CachedHistory:
    """One conversation's rows as read so far: their sequences and messages, oldest first, and
    about how many bytes they hold (their texts and tool uses)."""

    sequences: tuple[int, ...]
    messages: tuple[HistoryMessage, ...]
    size: int = 0


#: Each conversation's history as this process last read it, by conversation id.
HISTORY_CACHE: CacheFromSettings[str, CachedHistory] = CacheFromSettings(
    lambda: {
        "max_entries": webui_settings.HISTORY_CACHE_CONVERSATIONS,
        "max_bytes": webui_settings.HISTORY_CACHE_MAX_BYTES,
        "max_idle_seconds": webui_settings.HISTORY_CACHE_IDLE_SECONDS,
    },
    size=lambda history: history.size,
)


#: The shared cache's key for the deletions version: a fresh value written after each delete.
DELETIONS_VERSION_KEY = "webui.history.deletions_version"


class SeenVersion:
    """The deletions version this process last checked its kept histories against."""

    def __init__(self) -> None:
        self.value: str | None = None
        self.lock = threading.Lock()

    def moved(self) -> bool:
        """Whether the shared version differs from the one last seen (which it now is)."""
        current = cache.get(DELETIONS_VERSION_KEY, "")
        with self.lock:
            moved, self.value = current != self.value, current
        return moved


SEEN_DELETIONS = SeenVersion()


def drop_cached_history(conversation_id: Any) -> None:
    """Drop what this process caches of a conversation's history (it was deleted), and once the
    delete is committed tell every other process to check theirs (:func:`drop_deleted_elsewhere`)."""
    HISTORY_CACHE.discard(str(conversation_id))
    transaction.on_commit(new_deletions_version)


def drop_deleted_history(sender: type[Conversation], instance: Conversation, **kwargs: Any) -> None:
    """``post_delete`` of a conversation, whatever deleted it: :func:`drop_cached_history`."""
    drop_cached_history(instance.pk)


def new_deletions_version() -> None:
    """Write a fresh deletions version to the shared cache: a new value, never a count, so two
    deletes at once cannot write the same one."""
    cache.set(DELETIONS_VERSION_KEY, uuid.uuid4().hex, timeout=None)


def drop_deleted_elsewhere() -> None:
    """If any process deleted a conversation since this one last looked, drop the kept histories
    of the conversations that no longer exist: one cache read, and one query when it moved."""
    if not SEEN_DELETIONS.moved():
        return
    kept = HISTORY_CACHE.keys()
    alive = {
        str(pk) for pk in Conversation.objects.filter(pk__in=kept).values_list("pk", flat=True)
    }
    for key in set(kept) - alive:
        HISTORY_CACHE.discard(key)


def message_size(message: HistoryMessage) -> int:
    """About what a history message costs to cache: its texts and its tool uses' values."""
    size = text_size(message.text)
    for tool_round in message.rounds:
        size += text_size(tool_round.text)
        size += sum(len(repr(use.input)) + len(repr(use.output)) for use in tool_round.tool_uses)
    return size


def history_message(
    *, id: Any, role: str, content: str, tool_uses: list[Any], rounds: list[Any]
) -> HistoryMessage:
    """A stored row's values as the adapters replay it; tool rounds rebuilt in recorded order."""
    if role == "user":
        return HistoryMessage(id=str(id), role="user", text=content)
    uses = {use["id"]: ToolUse.from_dict(use) for use in tool_uses}
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


def read_rows(conversation: "Conversation", *, after: int, before: int) -> CachedHistory:
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
    return CachedHistory(tuple(sequences), tuple(messages), sum(message_size(m) for m in messages))


def conversation_history(
    conversation: "Conversation", *, before: "Message"
) -> tuple[HistoryMessage, ...]:
    """Every stored message of ``conversation`` that comes before ``before``, oldest first: what
    this process cached of it, plus the rows added since (one query, none when nothing was), once
    the histories of conversations deleted elsewhere are dropped (:func:`drop_deleted_elsewhere`)."""
    drop_deleted_elsewhere()
    key = str(conversation.pk)
    cached = HISTORY_CACHE.get(key) or CachedHistory((), ())
    last = cached.sequences[-1] if cached.sequences else 0
    if before.sequence > last + 1:
        added = read_rows(conversation, after=last, before=before.sequence)
        cached = CachedHistory(
            cached.sequences + added.sequences,
            cached.messages + added.messages,
            cached.size + added.size,
        )
        HISTORY_CACHE.put(key, cached)
    return cached.messages[: bisect_left(cached.sequences, before.sequence)]
