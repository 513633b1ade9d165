"""A brain call holds its ``webhook-id`` by a lease, not for ever.

The first call with an id writes its audit row as ``running`` with a lease a few seconds long,
compared with the database's clock (``Now()``, so no host's clock moves it), and a heartbeat
renews it while the call runs. A replay that finds the row running with its lease held is told to
wait (409); one that finds the lease lapsed (the process that held it was killed) takes the row
over in one conditional update and runs the call again, so a killed call is answered on replay
within seconds instead of answering 409 for ever.

The door also runs at most ``BRAIN_MAX_CONCURRENT`` calls at once in a process
(:data:`CALL_SLOTS`): each holds a web thread for up to ``BRAIN_DEADLINE`` seconds, and the chat
pages share those threads.
"""

import threading
from datetime import timedelta

from django.db.models import Q
from django.db.models.functions import Now

from pippa_memory.conf import memory_settings
from pippa_memory.models import BrainCall
from webui import heartbeat as webui_heartbeat


def lease_end() -> Now:
    """The database expression for "a lease from now"."""
    return Now() + timedelta(seconds=memory_settings.BRAIN_LEASE_SECONDS)


def take_over_lapsed(earlier: BrainCall, *, request_id: str) -> bool:
    """Claim ``earlier``'s row for the call ``request_id`` if it still says running and its lease
    lapsed (or it has none: a row from before leases). True when this call now holds it."""
    claimed = BrainCall.objects.filter(
        Q(lease_until__lt=Now()) | Q(lease_until__isnull=True),
        pk=earlier.pk,
        outcome=BrainCall.Outcome.RUNNING,
    ).update(request_id=request_id, lease_until=lease_end())
    return claimed == 1


class BrainCallHeartbeat(webui_heartbeat.Heartbeat):
    """Renews the lease of the running call ``request_id`` every third of the lease until closed
    (:class:`webui.heartbeat.Heartbeat`). A renewal that fails is logged and tried again at the
    next beat: the call goes on either way, and at worst a replay runs it a second time, which the
    stored answer then settles.
    """

    thread_name = "brain-lease"

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        super().__init__()

    def lease_seconds(self) -> float:
        return memory_settings.BRAIN_LEASE_SECONDS

    def renew(self) -> bool:
        BrainCall.objects.filter(
            request_id=self.request_id, outcome=BrainCall.Outcome.RUNNING
        ).update(lease_until=lease_end())
        return True

    def describe(self) -> str:
        return f"Brain call {self.request_id}"


class CallSlots:
    """How many brain calls this process runs now, against ``BRAIN_MAX_CONCURRENT``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0

    def try_enter(self) -> bool:
        """Take a slot if one is free (the limit is read at each call, so a setting's change is
        seen); False when the process already runs as many calls as it may."""
        with self.lock:
            if self.running >= memory_settings.BRAIN_MAX_CONCURRENT:
                return False
            self.running += 1
            return True

    def leave(self) -> None:
        with self.lock:
            self.running -= 1


CALL_SLOTS = CallSlots()
