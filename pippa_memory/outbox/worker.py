"""The delivery worker (``manage.py memory_outbox deliver``): the outbox rows are its queue.

Each delivery thread claims a batch of due events (:func:`pippa_memory.outbox.delivery.deliver_due`),
posts them over the engine client's keep-alive session and records the batch; when nothing is due
it sleeps until a commit rings the doorbell (:mod:`pippa_memory.outbox.doorbell`) or the poll
interval passes, which also finds retries coming due, rings that were lost and events left by a
worker that was killed (their lease ran out). ``drain`` stops once nothing is due: one sweep.
"""

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection

from pippa_memory.conf import memory_settings
from pippa_memory.outbox.delivery import deliver_due
from pippa_memory.outbox.doorbell import Listener, open_doorbell

logger = logging.getLogger(__name__)


class Doorbell:
    """Rings counted under a condition: a thread that found nothing due waits for a ring after
    the count it saw before claiming, so a ring that came while it was claiming is not missed."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self.rings = 0
        self.stopping = False

    def ring(self) -> None:
        with self._condition:
            self.rings += 1
            self._condition.notify_all()

    def stop(self) -> None:
        with self._condition:
            self.stopping = True
            self._condition.notify_all()

    def wait(self, *, seen: int, timeout: float) -> None:
        """Until a ring after ``seen``, a stop, or ``timeout`` seconds."""
        with self._condition:
            self._condition.wait_for(lambda: self.rings != seen or self.stopping, timeout)


@dataclass
class WorkerTally:
    """What the worker's threads made of the events they claimed, by outcome."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kinds: list[str]) -> None:
        with self.lock:
            self.counts.update(kinds)


def delivery_thread(bell: Doorbell, tally: WorkerTally, *, batch: int, drain: bool) -> None:
    """Claim, post and record batches until stopped (or, with ``drain``, until none is due)."""
    try:
        while not bell.stopping:
            seen = bell.rings
            try:
                outcomes = deliver_due(limit=batch)
            except Exception:
                # A database hiccup must not end the worker: the rows wait, due, for the next try.
                logger.exception("The outbox worker could not claim or record a batch.")
                connection.close()
                outcomes = []
                if drain:
                    raise
            if outcomes:
                tally.add([o.kind for o in outcomes])
                continue
            if drain:
                return
            bell.wait(seen=seen, timeout=memory_settings.OUTBOX_POLL_INTERVAL)
    finally:
        connection.close()


def hear_rings(bell: Doorbell, listener: Listener, threads: list[threading.Thread]) -> None:
    """Ring ``bell`` for every ring ``listener`` hears while the delivery threads run."""
    while not bell.stopping and any(t.is_alive() for t in threads):
        if listener.hear(0.5):
            bell.ring()


def run_worker(
    *,
    threads: int,
    batch: int,
    drain: bool,
    bell: Doorbell | None = None,
    on_ready: Callable[[bool], None] | None = None,
) -> Counter:
    """Run ``threads`` delivery threads until ``bell`` is stopped (or, with ``drain``, until
    nothing is due); returns how many attempts ended in each outcome. ``on_ready`` is told,
    as the worker starts its threads, whether it hears rings (``False``: it polls only)."""
    bell = bell or Doorbell()
    tally = WorkerTally()
    workers = [
        threading.Thread(
            target=delivery_thread,
            args=(bell, tally),
            kwargs={"batch": batch, "drain": drain},
            name=f"outbox-delivery-{n}",
            daemon=True,
        )
        for n in range(threads)
    ]
    # Told before the first delivery can log, so the worker's first line says how it runs.
    listener = None if drain else open_doorbell()
    if on_ready is not None:
        on_ready(listener is not None)
    for worker in workers:
        worker.start()
    try:
        if listener is not None:
            hear_rings(bell, listener, workers)
        for worker in workers:
            while worker.is_alive():
                worker.join(timeout=0.5)
    finally:
        bell.stop()
        if listener is not None:
            listener.close()
        for worker in workers:
            worker.join(timeout=memory_settings.OUTBOX_DELIVERY_TIMEOUT + 5)
    return tally.counts
