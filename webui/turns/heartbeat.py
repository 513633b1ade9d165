"""The running turn's heartbeat: a thread that renews its lease while the turn runs.

A vessel call may block for a minute before its first byte; a lease renewed only from the turn's
own loop would lapse then. So the renewal runs in a thread of its own
(:class:`webui.heartbeat.Heartbeat`, stopped in the turn's ``finally``), with its own database
connection, opened for each beat and closed after it: thirty open streams must not keep thirty
more connections to a PostgreSQL that allows a hundred in all. Each beat is one UPDATE
(:meth:`webui.turns.lock.TurnLock.beat`): the lease to a whole lease from the database's now, and
the reply's text so far, so a crash loses at most one beat's worth of text. A beat that meets a
locked database is logged and tried again at the next beat; a beat that finds the lock taken marks
the turn lost and ends the thread.
"""

from webui.heartbeat import Heartbeat
from webui.turns.lock import TurnLock, lease_seconds


class LeaseHeartbeat(Heartbeat):
    """Renews ``lock`` every third of a lease until the ``with`` block ends."""

    thread_name = "turn-lease"

    def __init__(self, lock: TurnLock) -> None:
        self.lock = lock
        super().__init__()

    def lease_seconds(self) -> float:
        return lease_seconds()

    def renew(self) -> bool:
        return self.lock.beat()

    def describe(self) -> str:
        return f"Turn {self.lock.turn_id}"
