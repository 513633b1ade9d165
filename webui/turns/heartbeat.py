"""The running turn's heartbeat: a thread that renews its lease while the turn runs.

A vessel call may block for a minute before its first byte; a lease renewed only from the turn's
own loop would lapse then. So the renewal runs in a thread of its own (a daemon, so it never holds
a process up, stopped and joined in the turn's ``finally``), with its own database connection,
opened for each beat and closed after it. Each beat is one UPDATE
(:meth:`webui.turns.lock.TurnLock.beat`): the lease to a whole lease from the database's now, and
the reply's text so far, so a crash loses at most one beat's worth of text. A beat that meets a
locked database is logged and tried again at the next beat; a beat that finds the lock taken marks
the turn lost and ends the thread.
"""

import logging
import threading
from types import TracebackType

from django.db import DatabaseError, connection

from webui.turns.lock import TurnLock, lease_seconds

logger = logging.getLogger(__name__)


class LeaseHeartbeat:
    """Renews ``lock`` every third of a lease until the ``with`` block ends."""

    def __init__(self, lock: TurnLock) -> None:
        self.lock = lock
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name="turn-lease", daemon=True)

    def __enter__(self) -> "LeaseHeartbeat":
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stopped.set()
        # A beat stuck behind a lock is not waited for past a lease: it can only match this turn's
        # row, which the turn releases next, so a late beat changes nothing.
        self.thread.join(timeout=lease_seconds())

    def run(self) -> None:
        interval = lease_seconds() / 3
        while not self.stopped.wait(interval):
            try:
                if not self.lock.beat():
                    logger.warning("Turn %s lost its conversation's lock", self.lock.turn_id)
                    return
            except DatabaseError:
                logger.warning("Turn %s could not renew its lease", self.lock.turn_id)
            finally:
                # Held only for the beat: thirty open streams must not keep thirty more
                # connections to a PostgreSQL that allows a hundred in all.
                connection.close()
