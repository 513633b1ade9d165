"""A heartbeat: a thread that renews a lease while the work holding it runs.

Work that holds a row by a lease (a running turn, a running brain call) may block for a minute
inside one call, so the renewal cannot come from the work's own loop: it runs in a thread of its
own (a daemon, so it never holds a process up), every third of the lease, until the ``with``
block ends. Each beat opens its own database connection and closes it after the beat, so many
long calls at once hold no connections while they wait. A beat that meets a database error is
logged and tried again at the next beat. On leaving, a beat stuck behind a lock is not waited for
past a lease: a beat only matches a row its work still holds, so a late one changes nothing.
"""

import logging
import threading
from types import TracebackType
from typing import Self

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


class Heartbeat:
    """Calls :meth:`renew` every third of :meth:`lease_seconds` until the ``with`` block ends,
    or until :meth:`renew` answers False (the lease is no longer this work's)."""

    thread_name = "lease"

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)

    def lease_seconds(self) -> float:
        raise NotImplementedError

    def renew(self) -> bool:
        """Renew the lease; False when the work no longer holds it (the beats end)."""
        raise NotImplementedError

    def describe(self) -> str:
        """What holds the lease, for the log."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stopped.set()
        self.thread.join(timeout=self.lease_seconds())

    def run(self) -> None:
        interval = self.lease_seconds() / 3
        while not self.stopped.wait(interval):
            try:
                if not self.renew():
                    logger.warning("%s lost its lease", self.describe())
                    return
            except DatabaseError:
                logger.warning("%s could not renew its lease", self.describe())
            finally:
                connection.close()
