"""One turn at a time per conversation: a lease on the conversation row, claimed by one
conditional UPDATE, so it works alike on SQLite and PostgreSQL and holds across processes.

A turn claims the lock before it touches anything (:func:`claim_turn`), renews the lease while it
runs and releases it when it finishes, fails or stops (:func:`release_turn`). Before each vessel
call the lease is renewed to cover that call's worst case from its start (:func:`call_lease`: the
vessel's deadline plus its read timeout plus :data:`LEASE_MARGIN`), and again at each poll between
the call's pieces (:meth:`TurnLock.poll`). Every renewal is one UPDATE that also checks the lock is
still this turn's; when it is not (the lease ran out and another turn claimed it) the turn learns
it as :class:`TurnLost` and must save nothing more. A process killed mid-turn cannot release the
lock: its lease runs out and the next turn claims it then. The stop flag lives on the same row, so
any process can ask a running turn to stop.
"""

import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import models
from django.db.models import Q
from django.utils import timezone

from webui.models import Conversation

#: How much longer than one vessel call's worst case (deadline plus read timeout) a lease lasts.
LEASE_MARGIN = timedelta(seconds=30)
#: How often, at most, a running turn reads its stop flag and renews its lease (seconds).
POLL_SECONDS = 0.25


class TurnBusy(Exception):
    """Another turn holds the conversation's lock."""

    def __init__(self, turn_id: str | None) -> None:
        super().__init__(f"turn {turn_id} is running")
        self.turn_id = turn_id


class TurnLost(Exception):
    """This turn's lease ran out and the lock is no longer its own (another turn may hold it)."""

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"turn {turn_id} no longer holds its conversation")
        self.turn_id = turn_id


def call_lease(conversation: Conversation) -> timedelta:
    """How long one vessel call of ``conversation`` may take at worst, from its start, plus
    :data:`LEASE_MARGIN`: the vessel's deadline, then a read that may block its read timeout."""
    vessel = conversation.vessel
    return timedelta(seconds=vessel.deadline + vessel.read_timeout) + LEASE_MARGIN


@dataclass
class TurnLock:
    """A claimed lock: which conversation, which turn, how long a renewal lasts (one vessel
    call's worst case, :func:`call_lease`), and when it was last polled."""

    conversation_id: uuid.UUID
    turn_id: str
    lease: timedelta
    polled_at: float = field(default_factory=time.monotonic)

    def mine(self) -> "models.QuerySet[Conversation]":
        """The conversation's row, only while this turn holds its lock."""
        return Conversation.objects.filter(pk=self.conversation_id, running_turn_id=self.turn_id)

    def renew(self) -> None:
        """Extend the lease to a whole :attr:`lease` from now, in one UPDATE that only matches
        while the lock is still this turn's; :class:`TurnLost` (nothing written) otherwise.
        Called before each vessel call, so the lease covers that call's worst case."""
        if not self.mine().update(turn_lease_until=timezone.now() + self.lease):
            raise TurnLost(self.turn_id)

    def poll(self, *, now: bool = False) -> bool:
        """Whether a stop was requested for this turn, renewing the lease (:meth:`renew`, so
        :class:`TurnLost` if the lock is no longer ours). Reads the row at most every
        :data:`POLL_SECONDS`, unless ``now``."""
        moment = time.monotonic()
        if not now and moment - self.polled_at < POLL_SECONDS:
            return False
        self.polled_at = moment
        self.renew()
        return self.mine().filter(turn_stop_requested=True).exists()


def claim_turn(conversation: Conversation) -> TurnLock:
    """Take the conversation's turn lock, free or expired; raise :class:`TurnBusy` naming the
    running turn otherwise. Nothing else is written either way. A lock that frees between the
    refused claim and the look at who holds it is claimed then (once more, not in a loop)."""
    lease = call_lease(conversation)
    turn_id = str(uuid.uuid4())
    for _attempt in range(2):
        now = timezone.now()
        claimed = (
            Conversation.objects.filter(pk=conversation.pk)
            .filter(Q(running_turn_id__isnull=True) | Q(turn_lease_until__lt=now))
            .update(
                running_turn_id=turn_id, turn_lease_until=now + lease, turn_stop_requested=False
            )
        )
        if claimed:
            return TurnLock(conversation_id=conversation.pk, turn_id=turn_id, lease=lease)
        running = (
            Conversation.objects.filter(pk=conversation.pk)
            .values_list("running_turn_id", flat=True)
            .first()
        )
        if running is not None:
            raise TurnBusy(str(running))
    raise TurnBusy(None)


def release_turn(lock: TurnLock) -> None:
    """Free the lock if this turn still holds it (an expired lease may have passed to another)."""
    Conversation.objects.filter(pk=lock.conversation_id, running_turn_id=lock.turn_id).update(
        running_turn_id=None, turn_lease_until=None, turn_stop_requested=False
    )


def request_stop(*, conversation: Conversation, turn_id: str) -> bool:
    """Ask the running turn ``turn_id`` of ``conversation`` to stop, from any process; ``False``
    when no such turn is running (finished, never started, or its lease ran out)."""
    return bool(
        Conversation.objects.filter(
            pk=conversation.pk, running_turn_id=turn_id, turn_lease_until__gte=timezone.now()
        ).update(turn_stop_requested=True)
    )
