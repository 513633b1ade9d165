"""``manage.py prune [--dry-run]``: delete the rows past their retention windows, with progress."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.utils import timezone
from tqdm import tqdm

from webui.conf import webui_settings
from webui.prune_windows import RetentionError
from webui.retention import delete_in_batches, prune_targets


class Command(BaseCommand):
    help = (
        "Delete unattended runs, temporary conversations and the plug-ins' "
        "rows (audit rows, delivered and dead turn events) past their windows (docs/configuration.md), "
        "in batches with a progress bar. --dry-run prints the counts and deletes nothing. The "
        "scheduler runs this once a day."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Print how many rows would go; delete nothing."
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=None,
            help="Rows deleted per transaction (default WEBUI_PRUNE_BATCH_SIZE).",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bars.")

    def handle(self, *args: Any, dry_run: bool, batch_size: int | None, **options: Any) -> None:
        size = batch_size if batch_size is not None else webui_settings.PRUNE_BATCH_SIZE
        if size < 1:
            raise CommandError(f"--batch-size must be at least 1, not {size}.")
        try:
            targets = prune_targets(now=timezone.now())
        except RetentionError as error:
            raise CommandError(f"{error} Nothing was deleted.") from error
        # tqdm redraws its line with "\r"; Django's wrapper would end every redraw with a newline.
        bar_stream = OutputWrapper(self.stderr._out, ending="")
        total = 0
        for target in targets:
            if target.queryset is None:
                self.stdout.write(f"{target.label}: {target.rule}")
                continue
            count = target.queryset.count()
            heading = f"{target.label} ({target.rule})"
            if dry_run:
                self.stdout.write(f"{heading}: {count} would be deleted")
                continue
            with tqdm(
                total=count,
                desc=target.label,
                unit="row",
                file=bar_stream,
                disable=options["no_progress"] or not count,
            ) as bar:
                deleted = delete_in_batches(target, batch_size=size, advance=bar.update)
            self.stdout.write(f"{heading}: deleted {deleted}")
            total += deleted
        if not dry_run:
            self.stdout.write(f"Deleted {total} row(s).")
