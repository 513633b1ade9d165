"""One turn at a time per conversation: a lease on the conversation row, claimed by one
conditional UPDATE, so it works alike on SQLite and PostgreSQL and holds across processes.

A turn claims the lock before it touches anything (:func:`claim_turn`), renews the lease while it
runs (:meth:`TurnLock.poll`, between the vessel's pieces and before each call) and releases it when
it finishes, fails or stops (:func:`release_turn`). A process killed mid-turn cannot release it: its
lease runs out (the vessel's deadline plus :data:`LEASE_MARGIN`) and the next turn claims it then.
The stop flag lives on the same row, so any process can ask a running turn to stop.
"""

import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from webui.models import Conversation

#: How much longer than one vessel call's deadline a lease lasts without renewal.
LEASE_MARGIN = timedelta(seconds=30)
#: How often, at most, a running turn reads its stop flag and renews its lease (seconds).
POLL_SECONDS = 0.25


class TurnBusy(Exception):
    """Another turn holds the conversation's lock."""

    def __init__(self, turn_id: str | None) -> None:
        super().__init__(f"turn {turn_id} is running")
        self.turn_id = turn_id


@dataclass
class TurnLock:
    """A claimed lock: which conversation, which turn, and when it was last polled."""

    conversation_id: uuid.UUID
    turn_id: str
    lease: timedelta
    polled_at: float = field(default_factory=time.monotonic)
    renewed_at: float = field(default_factory=time.monotonic)

    def poll(self, *, now: bool = False) -> bool:
        """Whether a stop was requested for this turn; renews the lease when half of it is gone.
        Reads the row at most every :data:`POLL_SECONDS`, unless ``now``."""
        moment = time.monotonic()
        if not now and moment - self.polled_at < POLL_SECONDS:
            return False
        self.polled_at = moment
        mine = Conversation.objects.filter(pk=self.conversation_id, running_turn_id=self.turn_id)
        if moment - self.renewed_at >= self.lease.total_seconds() / 2:
            mine.update(turn_lease_until=timezone.now() + self.lease)
            self.renewed_at = moment
        return mine.filter(turn_stop_requested=True).exists()


def claim_turn(conversation: Conversation) -> TurnLock:
    """Take the conversation's turn lock, free or expired; raise :class:`TurnBusy` naming the
    running turn otherwise. Nothing else is written either way."""
    lease = timedelta(seconds=conversation.vessel.deadline) + LEASE_MARGIN
    turn_id = str(uuid.uuid4())
    now = timezone.now()
    claimed = (
        Conversation.objects.filter(pk=conversation.pk)
        .filter(Q(running_turn_id__isnull=True) | Q(turn_lease_until__lt=now))
        .update(running_turn_id=turn_id, turn_lease_until=now + lease, turn_stop_requested=False)
    )
    if not claimed:
        running = (
            Conversation.objects.filter(pk=conversation.pk)
            .values_list("running_turn_id", flat=True)
            .first()
        )
        raise TurnBusy(str(running) if running else None)
    return TurnLock(conversation_id=conversation.pk, turn_id=turn_id, lease=lease)


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
