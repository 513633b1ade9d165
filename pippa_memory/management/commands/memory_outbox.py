"""``manage.py memory_outbox status|deliver|sweep|redrive``: the turn-event outbox, for operators."""

import signal
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from django.utils import timezone
from tqdm import tqdm

from pippa_memory.conf import memory_settings
from pippa_memory.health import start_delivery_heartbeat
from pippa_memory.models import OutboxEvent
from pippa_memory.outbox.doorbell import describe as describe_doorbell
from pippa_memory.outbox.events import make_due, sweep_outbox
from pippa_memory.outbox.worker import Doorbell, run_worker


class Command(BaseCommand):
    help = (
        "status: backlog and dead counts. deliver: the delivery worker (claims due events, posts "
        "them, woken by commits; --drain stops when none is due). sweep: deliver every due event "
        "once. redrive: make due and dead events pending now and show progress until they drain "
        "(the delivery worker delivers them)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["status", "deliver", "sweep", "redrive"])
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="deliver: delivery threads (default OUTBOX_WORKER_THREADS).",
        )
        parser.add_argument(
            "--batch",
            type=int,
            default=None,
            help="deliver: events claimed at a time (default OUTBOX_BATCH_SIZE).",
        )
        parser.add_argument(
            "--drain", action="store_true", help="deliver: stop once no event is due."
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="redrive: make them due and return at once."
        )
        parser.add_argument(
            "--timeout", type=float, default=600.0, help="redrive: stop watching after N seconds."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"do_{options['action']}")(**options)

    def counts(self) -> dict[str, int]:
        rows = OutboxEvent.objects.values("status").annotate(n=Count("id"))
        found = {row["status"]: row["n"] for row in rows}
        return {status: found.get(status, 0) for status in OutboxEvent.Status.values}

    def do_status(self, **options: Any) -> None:
        counts = self.counts()
        due = OutboxEvent.objects.due(timezone.now()).count()
        oldest = (
            OutboxEvent.objects.filter(status=OutboxEvent.Status.PENDING)
            .order_by("created_at")
            .values_list("created_at", flat=True)
            .first()
        )
        self.stdout.write(f"pending:   {counts['pending']} ({due} due now)")
        self.stdout.write(f"delivered: {counts['delivered']}")
        self.stdout.write(f"dead:      {counts['dead']}")
        if oldest:
            self.stdout.write(f"oldest pending since {oldest:%Y-%m-%d %H:%M:%S %Z}")
        if counts["dead"]:
            self.stdout.write(
                self.style.WARNING("Dead events never reached the engine: `memory_outbox redrive`.")
            )

    def do_deliver(
        self, *, threads: int | None, batch: int | None, drain: bool, **options: Any
    ) -> None:
        threads = threads or memory_settings.OUTBOX_WORKER_THREADS
        batch = batch or memory_settings.OUTBOX_BATCH_SIZE
        bell = Doorbell()

        def announce(hears_rings: bool) -> None:
            if drain:
                return
            woken = f"woken by {describe_doorbell()}, " if hears_rings else ""
            self.stdout.write(
                f"Delivering turn events with {threads} thread(s), {batch} at a time; {woken}"
                f"polling every {memory_settings.OUTBOX_POLL_INTERVAL:g} s. Ctrl-C stops."
            )
            self.stdout.flush()

        if not drain:
            # supervisord and systemd stop a process with SIGTERM: finish the batches in hand.
            signal.signal(signal.SIGTERM, lambda *_: bell.stop())
            start_delivery_heartbeat()  # the health page's delivery worker and engine lines
        try:
            counts = run_worker(
                threads=threads, batch=batch, drain=drain, bell=bell, on_ready=announce
            )
        except KeyboardInterrupt:
            bell.stop()
            return
        summary = ", ".join(f"{counts[k]} {k}" for k in ("delivered", "retry", "dead", "released"))
        self.stdout.write(f"Attempts: {summary}.")

    def do_sweep(self, **options: Any) -> None:
        self.stdout.write(f"Attempted {sweep_outbox()} due event(s).")

    def do_redrive(self, *, no_wait: bool, timeout: float, **options: Any) -> None:
        waiting = OutboxEvent.objects.exclude(status=OutboxEvent.Status.DELIVERED)
        ids = list(waiting.values_list("id", flat=True))
        made = make_due(OutboxEvent.objects.filter(id__in=ids), revive_dead=True)
        self.stdout.write(f"Made {made} event(s) due now.")
        if no_wait or not made:
            return
        deadline = time.monotonic() + timeout
        with tqdm(total=made, desc="delivering", unit="event", file=self.stdout) as bar:
            done = 0
            while done < made:
                if time.monotonic() > deadline:
                    raise CommandError(
                        f"{made - done} event(s) still undelivered after {timeout:g} s: is the "
                        "delivery worker (`memory_outbox deliver`) running and the engine up? "
                        "`memory_outbox status` shows more."
                    )
                time.sleep(0.5)
                settled = OutboxEvent.objects.filter(id__in=ids).exclude(
                    status=OutboxEvent.Status.PENDING
                )
                now_done = settled.count()
                bar.update(now_done - done)
                done = now_done
        dead = OutboxEvent.objects.filter(id__in=ids, status=OutboxEvent.Status.DEAD).count()
        self.stdout.write(f"Drained: {made - dead} delivered, {dead} dead.")
