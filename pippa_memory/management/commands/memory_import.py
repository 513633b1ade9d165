"""``manage.py memory_import SOUL FILE``: take a soul export file into the engine, through the
engine contract's import route, with a progress bar. The whole file, the members and every batch
are checked before anything is sent; an import adds (never overwrites), and one cut off half-way
is finished by running it again, with nothing doubled."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from pippa_memory.management.commands.memory_export import progress_of, soul_named
from pippa_memory.portability.file_format import BadExportFile
from pippa_memory.portability.soul_moves import MoveFailed, import_soul


class Command(BaseCommand):
    help = (
        "Import a soul export file (manage.py memory_export) into the soul's memory: adds what "
        "the engine lacks, by item id; run it again to finish one cut off."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("soul", help="the soul's slug")
        parser.add_argument("file", help="the export file to read")

    def handle(self, *args: Any, **options: Any) -> None:
        soul = soul_named(options["soul"])
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"No file at {path}.")
        bar = tqdm(desc="Importing memories", unit=" memories", file=self.stderr._out)
        try:
            done = import_soul(soul=soul, path=path, progress=progress_of(bar))
        except BadExportFile as bad:
            raise CommandError(f"{path}: {bad} Nothing was imported.") from None
        except MoveFailed as failure:
            raise CommandError(
                f"The import did not finish: {failure} What was sent before is kept; run the "
                "same command again to finish it (nothing is doubled)."
            ) from None
        finally:
            bar.close()
        self.stdout.write(
            f"Imported into {soul.slug}: {done.added} added, {done.present} already there, "
            f"{done.forgotten} left forgotten; head {done.revision}; {done.repinned} chat(s) "
            "re-pin at their next turn."
        )
