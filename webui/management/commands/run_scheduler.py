"""``manage.py run_scheduler``: start due scheduled jobs and wakes, once or on a loop."""

import time
from typing import Any

from django.core.management.base import BaseCommand

from webui.unattended import run_due_jobs


class Command(BaseCommand):
    help = "Run every due scheduled job and wake once; --every N repeats every N seconds."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--every", type=float, default=None, help="Loop every N seconds.")

    def handle(self, *args: Any, **options: Any) -> None:
        every = options["every"]
        while True:
            for run in run_due_jobs():
                self.stdout.write(
                    f"{run.started_at:%H:%M:%S} {run.get_kind_display()} for {run.soul}: "
                    f"{run.outcome} ({run.memory.get('source', 'no memory')})"
                )
            if every is None:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
