"""A graceful shutdown of a web process: its running turns finish or are interrupted, never lost.

gunicorn stops a worker with SIGTERM and kills it ``graceful_timeout`` seconds later; a turn still
running then would lose its reply (the vessel's text is only in memory until the reply is saved).
The worker's SIGTERM hook (``pippa_site/gunicorn_conf.py``) calls :func:`begin_shutdown` with how long
turns may still run. Until then they go on as usual and most finish; from then on every turn of
the process stops at its next piece, as if the member had pressed Stop, and saves what had arrived
marked interrupted (:class:`webui.turns.events.StopSignal` reads :func:`interrupting`).

The state is one number, set from a signal handler, so it takes no lock.
"""

import math
import time

_interrupt_at: float = math.inf


def begin_shutdown(*, finish_within: float) -> None:
    """The process is stopping: turns may run ``finish_within`` seconds more, then are interrupted.
    A second call never moves the moment later."""
    global _interrupt_at
    _interrupt_at = min(_interrupt_at, time.monotonic() + max(0.0, finish_within))


def interrupting() -> bool:
    """Whether the running turns of this process must stop and save now."""
    return time.monotonic() >= _interrupt_at


def reset_shutdown() -> None:
    """Forget a shutdown begun in this process (for tests)."""
    global _interrupt_at
    _interrupt_at = math.inf
