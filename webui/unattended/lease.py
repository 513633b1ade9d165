"""An unattended run is held by a lease, as a turn is: a process killed mid-run leaves no run
"running" for ever.

While a scheduled job or a Soul Stream wake runs (its memory prepared, its turn answered), a
heartbeat (:class:`RunHeartbeat`, :mod:`webui.heartbeat`) renews the run's ``lease_until`` every
third of ``WEBUI_TURN_LEASE_SECONDS`` (15 s) on the database's clock. A scheduler or web process
killed mid-run stops renewing it, and :func:`interrupt_lapsed_runs` (each tick of the scheduler,
and every look at the Soul Stream) marks the run ``interrupted``, with words saying so, once its
lease has lapsed: within a lease and a tick of the kill. It is not run again; a scheduled job's
next run comes at its next time as usual.
"""

from django.db.models import Q
from django.db.models.functions import Now

from webui.heartbeat import Heartbeat
from webui.models import UnattendedRun
from webui.turns.lock import lease_end, lease_seconds

#: What an interrupted run's record says (the admin and, for those who may wake, the Soul Stream).
INTERRUPTED_WORDS = (
    "The process running it ended (a crash or a restart) before it finished, so it was marked "
    "interrupted once its lease lapsed. It was not run again; the next scheduled run goes ahead."
)


class RunHeartbeat(Heartbeat):
    """Renews the lease of the running unattended run ``run_id`` until the ``with`` block ends."""

    thread_name = "run-lease"

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        super().__init__()

    def lease_seconds(self) -> float:
        return lease_seconds()

    def renew(self) -> bool:
        running = UnattendedRun.objects.filter(
            pk=self.run_id, outcome=UnattendedRun.Outcome.RUNNING
        )
        return bool(running.update(lease_until=lease_end()))

    def describe(self) -> str:
        return f"Unattended run {self.run_id}"


def interrupt_lapsed_runs() -> int:
    """Mark ``interrupted`` every run still "running" whose lease lapsed (or that never had one,
    from before runs were leased); how many."""
    lapsed = UnattendedRun.objects.filter(outcome=UnattendedRun.Outcome.RUNNING).filter(
        Q(lease_until__lt=Now()) | Q(lease_until__isnull=True)
    )
    return lapsed.update(
        outcome=UnattendedRun.Outcome.INTERRUPTED,
        error=INTERRUPTED_WORDS,
        finished_at=Now(),
        lease_until=None,
    )
