"""One turn at a time per conversation: a short lease on the conversation row, renewed by the
running turn's heartbeat and compared with the database's clock, so it works alike on SQLite and
PostgreSQL, holds across processes and hosts, and heals after a crash.

A turn claims the lock before it touches anything (:func:`claim_turn`). While it runs, a
heartbeat thread (:class:`webui.turns.heartbeat.LeaseHeartbeat`) renews the lease every third of
``WEBUI_TURN_LEASE_SECONDS`` (15 s) with one UPDATE whose condition and new end are the
database's ``Now()``, so no host's clock moves it and a vessel call blocked on its first byte keeps
it. The turn renews it itself before each tool round and before its save (:meth:`TurnLock.renew`),
so a turn that lost its lock runs no tool and saves nothing; it learns so as :class:`TurnLost`.
It releases the lock when it finishes, fails or stops (:func:`release_turn`).

A process killed mid-turn cannot release the lock: its lease lapses within one lease of its last
beat, and the next claim (a send, a retry, a delete, a stop) takes it over, keeping what the dead
turn had as its reply marked interrupted (:mod:`webui.turns.interrupted`). The stop flag lives on
the same row, so any process can ask a running turn to stop; the turn only reads it.
"""

import enum
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import models, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.functions import Now

from webui.conf import webui_settings
from webui.models import Conversation, Message
from webui.turns.busy_database import retry_while_locked
from webui.turns.interrupted import keep_interrupted_reply
from webui.turns.reply_cap import check_reply_cap

#: How often, at most, a running turn reads its stop flag between the pieces of a reply (seconds).
POLL_SECONDS = 0.25


class TurnBusy(Exception):
    """Another turn holds the conversation's lock, and its lease is live."""

    def __init__(self, turn_id: str | None) -> None:
        super().__init__(f"turn {turn_id} is running")
        self.turn_id = turn_id


class TurnLost(Exception):
    """The lock is no longer this turn's: its lease lapsed and another claim took it, or the
    conversation was deleted."""

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"turn {turn_id} no longer holds its conversation")
        self.turn_id = turn_id


class ConversationGone(Exception):
    """The conversation to claim no longer exists."""


def lease_seconds() -> float:
    """How long a lease lasts from its last renewal (``WEBUI_TURN_LEASE_SECONDS``)."""
    return float(webui_settings.TURN_LEASE_SECONDS)


def lease_end() -> Now:
    """The database expression for "a lease from now", on the database's own clock."""
    return Now() + timedelta(seconds=lease_seconds())


class ReplySoFar:
    """The text of the running vessel call so far, shared by the turn (which adds each piece)
    and its heartbeat (which writes it on the row). ``guard`` is held by the heartbeat around
    each write, so a :meth:`clear` returns only once no write of the old text is in flight."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.guard = threading.Lock()

    def add(self, text: str) -> None:
        self.pieces.append(text)

    def clear(self) -> None:
        with self.guard:
            self.pieces = []

    def text(self) -> str:
        return "".join(list(self.pieces))


@dataclass
class TurnLock:
    """A claimed lock: which conversation and turn, what the turn has written so far, and
    whether its heartbeat found the lock taken (``lost``)."""

    conversation_id: uuid.UUID
    turn_id: str
    budget: float = 120.0
    so_far: ReplySoFar = field(default_factory=ReplySoFar)
    lost: threading.Event = field(default_factory=threading.Event)
    polled_at: float = field(default_factory=time.monotonic)

    def mine(self) -> "models.QuerySet[Conversation]":
        """The conversation's row, only while this turn holds its lock."""
        return Conversation.objects.filter(pk=self.conversation_id, running_turn_id=self.turn_id)

    def beat(self) -> bool:
        """One renewal: the lease to a whole lease from the database's now, and the text so far
        on the row, in one UPDATE that only matches while the lock is this turn's. Whether it
        did (a lapsed lease no other turn claimed is taken back: it heals)."""
        with self.so_far.guard:
            renewed = self.mine().update(
                turn_lease_until=lease_end(), turn_partial_text=self.so_far.text()
            )
        if not renewed:
            self.lost.set()
        return bool(renewed)

    def renew(self) -> None:
        """:meth:`beat`, tried again while the database is locked (within the turn's budget,
        :class:`~webui.turns.busy_database.DatabaseBusy` past it); :class:`TurnLost` when the
        lock is no longer this turn's. Called before each tool round and before the save."""
        if not retry_while_locked(self.beat, budget=self.budget, what="A turn's renewal"):
            raise TurnLost(self.turn_id)

    def answering(self, message: Message) -> None:
        """Note on the row the user message this turn answers, for a crash to be kept against."""
        if not retry_while_locked(
            lambda: self.mine().update(turn_message_id=message.pk),
            budget=self.budget,
            what="A turn's start",
        ):
            raise TurnLost(self.turn_id)

    def stop_requested(self, *, now: bool = False) -> bool:
        """Whether a stop was asked for this turn: a read of its row (never a write), at most
        every :data:`POLL_SECONDS` unless ``now``. :class:`TurnLost` when the lock is not ours."""
        if self.lost.is_set():
            raise TurnLost(self.turn_id)
        moment = time.monotonic()
        if not now and moment - self.polled_at < POLL_SECONDS:
            return False
        self.polled_at = moment
        flag = self.mine().values_list("turn_stop_requested", flat=True).first()
        if flag is None:
            self.lost.set()
            raise TurnLost(self.turn_id)
        return flag


def live_lease() -> ExpressionWrapper:
    """Whether a row's lease holds now, on the database's clock (NULL, no lease, is false)."""
    return ExpressionWrapper(Q(turn_lease_until__gte=Now()), output_field=BooleanField())


def claim_turn(
    conversation: Conversation,
    *,
    resuming: uuid.UUID | None = None,
    keep: bool = True,
    capped: bool = False,
) -> TurnLock:
    """Take the conversation's turn lock, free or lapsed; raise :class:`TurnBusy` naming the
    running turn while its lease holds (nothing is written then), :class:`ConversationGone` when
    the conversation was deleted. A lapsed turn's partial reply is kept, marked interrupted
    (:func:`~webui.turns.interrupted.keep_interrupted_reply`), unless it answered ``resuming``,
    the message this claim is about to answer again (a retry replays its saved rounds instead),
    or ``keep`` is false (a delete: the conversation goes with it). A ``capped`` claim (a reply
    to write) counts the member's replies being written in the same transaction and raises
    :class:`~webui.turns.reply_cap.TooManyReplies` at the cap, writing nothing."""
    turn_id = str(uuid.uuid4())
    taken = {
        "running_turn_id": turn_id,
        "turn_lease_until": lease_end(),
        "turn_stop_requested": False,
        "turn_message_id": None,
        "turn_partial_text": "",
    }

    free = Conversation.objects.filter(pk=conversation.pk, running_turn_id=None)

    def claim() -> None:
        # The usual case, a free conversation, is one UPDATE: nothing lapsed to keep.
        if not capped and free.update(**taken):
            return
        with transaction.atomic():
            if capped:
                check_reply_cap(conversation.viewer_id)
                if free.update(**taken):
                    return
            row = (
                Conversation.objects.select_for_update()
                .filter(pk=conversation.pk)
                .annotate(live=live_lease())
                .values("running_turn_id", "live", "turn_message_id", "turn_partial_text")
                .first()
            )
            if row is None:
                raise ConversationGone(str(conversation.pk))
            if row["running_turn_id"] is not None:
                if row["live"]:
                    raise TurnBusy(str(row["running_turn_id"]))
                if keep and row["turn_message_id"] != resuming:
                    keep_interrupted_reply(
                        conversation=conversation,
                        message_id=row["turn_message_id"],
                        text=row["turn_partial_text"],
                    )
            Conversation.objects.filter(pk=conversation.pk).update(**taken)

    retry_while_locked(claim, budget=lease_seconds(), what="A turn's claim")
    return TurnLock(
        conversation_id=conversation.pk, turn_id=turn_id, budget=conversation.vessel.deadline
    )


def release_turn(lock: TurnLock) -> None:
    """Free the lock if this turn still holds it (a lapsed lease may have passed to another)."""
    retry_while_locked(
        lambda: lock.mine().update(
            running_turn_id=None,
            turn_lease_until=None,
            turn_stop_requested=False,
            turn_message_id=None,
            turn_partial_text="",
        ),
        budget=lock.budget,
        what="A turn's release",
    )


def turn_is_live(conversation_id: uuid.UUID) -> bool:
    """Whether a turn holds the conversation by a lease that has not lapsed."""
    return Conversation.objects.filter(
        pk=conversation_id, running_turn_id__isnull=False, turn_lease_until__gte=Now()
    ).exists()


class StopOutcome(enum.Enum):
    """What a stop request found: a live turn (asked to stop), a lapsed one (nothing was running
    it; the conversation is freed and its partial reply kept), or no such turn."""

    STOPPING = "stopping"
    LAPSED = "lapsed"
    NOT_RUNNING = "not_running"


def request_stop(*, conversation: Conversation, turn_id: str) -> StopOutcome:
    """Ask the running turn ``turn_id`` of ``conversation`` to stop, from any process. A turn
    whose lease lapsed (its process died) is not running: its lock is taken over and freed, its
    partial reply kept marked interrupted, and :attr:`StopOutcome.LAPSED` says so."""
    mine = Conversation.objects.filter(pk=conversation.pk, running_turn_id=turn_id)
    for _attempt in range(2):
        if mine.filter(turn_lease_until__gte=Now()).update(turn_stop_requested=True):
            return StopOutcome.STOPPING
        if not mine.exists():
            return StopOutcome.NOT_RUNNING
        try:
            lock = claim_turn(conversation)
        except TurnBusy:
            continue  # its heartbeat renewed the lease meanwhile: it is running after all
        except ConversationGone:
            return StopOutcome.NOT_RUNNING
        release_turn(lock)
        return StopOutcome.LAPSED
    return StopOutcome.NOT_RUNNING  # claimed by others twice over: this turn is not the one running
