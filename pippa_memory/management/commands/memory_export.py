"""``manage.py memory_export SOUL FILE``: write every live memory of a soul (every member's,
private and household) to an export file (``docs/memory-export.md``), through the engine
contract's export route, with a progress bar. The file is whole or not written."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from pippa_memory.portability.soul_moves import MoveFailed, export_soul
from webui.models import Soul


def soul_named(slug: str) -> Soul:
    soul = Soul.objects.filter(slug=slug).first()
    if soul is None:
        known = ", ".join(Soul.objects.values_list("slug", flat=True)) or "none"
        raise CommandError(f"No soul is called {slug!r} (souls here: {known}).")
    return soul


class Command(BaseCommand):
    help = (
        "Export a soul's whole memory (every member's, private and household) to FILE, JSON "
        "Lines as docs/memory-export.md describes; keep the file as safe as the database."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("soul", help="the soul's slug")
        parser.add_argument("file", help="the export file to write (replaced if it exists)")

    def handle(self, *args: Any, **options: Any) -> None:
        soul = soul_named(options["soul"])
        path = Path(options["file"])
        bar = tqdm(desc="Exporting memories", unit=" memories", file=self.stderr._out)
        try:
            count = export_soul(soul=soul, path=path, progress=progress_of(bar))
        except (MoveFailed, OSError) as failure:
            raise CommandError(
                f"The export did not finish: {failure} Nothing was written."
            ) from None
        finally:
            bar.close()
        self.stdout.write(f"Exported {count} memories of {soul.slug} to {path}.")


def progress_of(bar: tqdm) -> Any:
    def progress(done: int, total: int | None) -> None:
        if total is not None:
            bar.total = max(total, done)
        bar.n = done
        bar.refresh()

    return progress
