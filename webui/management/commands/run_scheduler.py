"""``manage.py run_scheduler``: start due scheduled jobs and wakes, and the day's prune, once or on
a loop; each tick first marks interrupted the runs whose process ended mid-run
(:mod:`webui.unattended.lease`)."""

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from webui.health.beats import ProcessBeat
from webui.retention import run_daily_prune
from webui.unattended.lease import interrupt_lapsed_runs
from webui.unattended.runner import run_due_jobs


class Command(BaseCommand):
    help = (
        "Run every due scheduled job and wake once, and `prune` if it has not run today; "
        "--every N repeats every N seconds."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--every", type=float, default=None, help="Loop every N seconds.")

    def handle(self, *args: Any, **options: Any) -> None:
        every = options["every"]
        if every is not None:
            ProcessBeat("scheduler").start()  # the health page's "scheduler" line
            # supervisord and systemd stop a process with SIGTERM: end the tick in hand, then go.
            stopping = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stopping.set())
        while True:
            self.tick()
            if every is None or stopping.is_set():
                return
            try:
                if stopping.wait(every):
                    return
            except KeyboardInterrupt:
                return

    def tick(self) -> None:
        interrupted = interrupt_lapsed_runs()
        if interrupted:
            self.stdout.write(
                f"{timezone.localtime():%H:%M:%S} {interrupted} run(s) whose process ended "
                "mid-run marked interrupted"
            )
        for run in run_due_jobs():
            self.stdout.write(
                f"{run.started_at:%H:%M:%S} {run.get_kind_display()} for {run.soul}: "
                f"{run.outcome} ({run.memory.get('source', 'no memory')})"
            )
        pruned = run_daily_prune()
        if pruned is not None:
            if "error" in pruned:
                summary = f"prune failed: {pruned['error']}"
            else:
                kinds = ", ".join(f"{n} {label}" for label, n in pruned.items()) or "nothing"
                summary = f"pruned {sum(pruned.values())} row(s): {kinds}"
            self.stdout.write(f"{timezone.localtime():%H:%M:%S} {summary}")
