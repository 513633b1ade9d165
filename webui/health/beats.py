"""Heartbeats: each long-running process writes its :class:`~webui.models.ProcessHeartbeat` row
every ``WEBUI_HEARTBEAT_SECONDS`` from a thread of its own, so a process busy in one long call
still beats, and one that died stops. The web server's workers start theirs from gunicorn's
``post_worker_init`` (``pippa_site/gunicorn_conf.py``), the scheduler from ``run_scheduler``, and the
memory plug-in its delivery worker's.
"""

import logging
import os
import socket
from collections.abc import Callable
from datetime import datetime

from django.db import DatabaseError, connection
from django.utils import timezone

from webui.conf import webui_settings
from webui.heartbeat import Heartbeat
from webui.models import ProcessHeartbeat

logger = logging.getLogger(__name__)

#: Beats a process may miss before the health page calls it stopped.
MISSED_BEATS = 3


def this_host() -> str:
    """The machine's name, as heartbeats record it."""
    return socket.gethostname()


def record_beat(role: str, *, host: str | None = None, started_at: datetime | None = None) -> None:
    """Write ``role``'s beat now, for this machine (or ``host``) and this process."""
    ProcessHeartbeat.objects.update_or_create(
        role=role,
        host=host or this_host(),
        defaults={
            "pid": os.getpid() if started_at else None,
            "started_at": started_at,
            "beat_at": timezone.now(),
        },
    )


def stale_after_seconds() -> float:
    """How long after its last beat a process counts as stopped."""
    return MISSED_BEATS * webui_settings.HEARTBEAT_SECONDS


class ProcessBeat(Heartbeat):
    """Beats for ``role`` every ``WEBUI_HEARTBEAT_SECONDS`` for as long as the process lives (a
    daemon thread), the first at once. ``also`` runs after each beat (the delivery worker's probe
    of the memory engine); what it raises is logged, and the beats go on."""

    thread_name = "process-heartbeat"

    def __init__(self, role: str, *, also: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.role = role
        self.also = also
        self.started_at = timezone.now()

    def lease_seconds(self) -> float:
        return 3 * webui_settings.HEARTBEAT_SECONDS  # one beat each third of it

    def renew(self) -> bool:
        record_beat(self.role, started_at=self.started_at)
        if self.also is not None:
            try:
                self.also()
            except Exception:
                logger.exception("The %s heartbeat's check failed", self.role)
        return True

    def describe(self) -> str:
        return f"The {self.role} heartbeat"

    def run(self) -> None:
        try:
            self.renew()  # at once: a process that just started is seen at once
        except DatabaseError:
            logger.warning("%s could not be written", self.describe())
        finally:
            connection.close()
        super().run()

    def start(self) -> "ProcessBeat":
        """Beat now and every interval until the process ends, in a thread of its own."""
        self.thread.start()
        return self
