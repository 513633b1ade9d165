"""``manage.py memory_outbox status|sweep|redrive``: the turn-event outbox, for operators."""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from django.utils import timezone
from tqdm import tqdm

from pippa_memory.conf import memory_settings
from pippa_memory.models import OutboxEvent
from pippa_memory.outbox import make_due, sweep_outbox


class Command(BaseCommand):
    help = (
        "status: backlog and dead counts. sweep: enqueue due events once (or --every N seconds). "
        "redrive: make due and dead events pending now, enqueue them, and show progress until they "
        "drain (the task worker delivers them)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["status", "sweep", "redrive"])
        parser.add_argument(
            "--every",
            type=float,
            default=None,
            help="sweep: repeat every N seconds (default once; 0 uses OUTBOX_SWEEP_INTERVAL).",
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="redrive: enqueue and return at once."
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

    def do_sweep(self, *, every: float | None, **options: Any) -> None:
        if every is None:
            self.stdout.write(f"Enqueued {sweep_outbox()} due event(s).")
            return
        interval = every or memory_settings.OUTBOX_SWEEP_INTERVAL
        self.stdout.write(f"Sweeping the outbox every {interval:g} s. Ctrl-C stops.")
        try:
            while True:
                found = sweep_outbox()
                if found:
                    self.stdout.write(f"{timezone.now():%H:%M:%S} enqueued {found} due event(s)")
                time.sleep(interval)
        except KeyboardInterrupt:
            return

    def do_redrive(self, *, no_wait: bool, timeout: float, **options: Any) -> None:
        waiting = OutboxEvent.objects.exclude(status=OutboxEvent.Status.DELIVERED)
        ids = list(waiting.values_list("id", flat=True))
        made = make_due(OutboxEvent.objects.filter(id__in=ids), revive_dead=True)
        self.stdout.write(f"Re-enqueued {made} event(s).")
        if no_wait or not made:
            return
        deadline = time.monotonic() + timeout
        with tqdm(total=made, desc="delivering", unit="event", file=self.stdout) as bar:
            done = 0
            while done < made:
                if time.monotonic() > deadline:
                    raise CommandError(
                        f"{made - done} event(s) still undelivered after {timeout:g} s: is the "
                        "task worker running and the engine up? `memory_outbox status` shows more."
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
