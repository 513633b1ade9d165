"""A write that meets a locked database is tried again, within a budget, instead of failing.

SQLite lets one writer in at a time and answers "database is locked" once its busy timeout runs
out; a turn's renewal or save that meets it would otherwise throw away a reply the vessel already
wrote (and was paid for). PostgreSQL waits on row locks instead, so this rarely fires there.
"""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The longest wait between two tries (seconds); the first wait is a twentieth of a second.
MAX_DELAY = 2.0


class DatabaseBusy(Exception):
    """The database stayed locked for the whole budget; the write did not happen."""


def is_locked(error: OperationalError) -> bool:
    """Whether ``error`` is a database busy with another writer (worth trying again)."""
    text = str(error).lower()
    return "locked" in text or "busy" in text


def retry_while_locked(action: Callable[[], T], *, budget: float, what: str) -> T:
    """``action()``, tried again while it meets a locked database, until ``budget`` seconds have
    passed; :class:`DatabaseBusy` then. Any other error is raised at once. ``action`` must be
    safe to run again (one transaction, or one statement)."""
    deadline = time.monotonic() + budget
    delay = 0.05
    while True:
        try:
            return action()
        except OperationalError as error:
            if not is_locked(error):
                raise
            if time.monotonic() + delay > deadline:
                raise DatabaseBusy(
                    f"{what}: the database stayed locked for {budget:g} s"
                ) from error
            logger.warning("%s met a locked database; trying again in %.2f s", what, delay)
            time.sleep(delay)
            delay = min(delay * 2, MAX_DELAY)
