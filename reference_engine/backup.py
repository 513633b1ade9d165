"""A consistent copy of the engine's SQLite database while the engine serves: SQLite's online
backup API (``sqlite3.Connection.backup``) copies page by page, restarting when a writer changes a
page already copied, so the copy is one committed state. The copy is written beside its target,
checked (``PRAGMA integrity_check``) and only then moved into place.

A PostgreSQL engine database is backed up by PostgreSQL's own tool: :class:`BackupRefused` says
the ``pg_dump`` line (``docs/deployment.md``).

:class:`NightlyCopies` keeps a copy a day in a folder (``--backup-dir``), the newest
``--backup-keep`` of them, from a thread of the engine's worker: a copy is due when the newest in
the folder was taken a day ago or more (so a restart never skips a day, and never takes two).
"""

import logging
import os
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reference_engine.storage.database import sqlite_path

logger = logging.getLogger(__name__)

NIGHTLY = "engine-%Y%m%d-%H%M%S.sqlite3"
"""A nightly copy's name: when it was taken (UTC), so names sort as times do."""
EVERY = timedelta(days=1)
LOOK_SECONDS = 60.0
"""How often the thread looks whether a copy is due."""


class BackupRefused(ValueError):
    """A backup this command does not make, with what to do instead."""


def pg_dump_line(url: str) -> str:
    return f'pg_dump --format=custom --file=engine.dump "{url.split("?")[0]}"'


def backup_database(url: str, target: Path) -> int:
    """Copy the SQLite engine database at ``url`` to ``target`` (replaced whole), consistently
    while engines write to it; the number of memories the copy keeps."""
    path = sqlite_path(url)
    if path is None:
        raise BackupRefused(
            "The engine's database is PostgreSQL: back it up with PostgreSQL's own tool, "
            f"for example: {pg_dump_line('postgres://…')} (docs/deployment.md)."
        )
    if not Path(path).is_file():
        raise BackupRefused(f"There is no engine database at {path}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    writing = target.with_name(target.name + ".writing")
    writing.unlink(missing_ok=True)
    source = sqlite3.connect(path, timeout=30)
    copy = sqlite3.connect(writing)
    try:
        source.execute("PRAGMA busy_timeout=30000")
        source.backup(copy, pages=256)
        verdict = copy.execute("PRAGMA integrity_check").fetchone()[0]
        if verdict != "ok":
            raise BackupRefused(f"The copy failed SQLite's integrity check ({verdict}).")
        row = copy.execute(
            "SELECT COUNT(*) FROM engine_items WHERE forgotten_rev IS NULL"
        ).fetchone()
    finally:
        copy.close()
        source.close()
    os.chmod(writing, 0o600)  # a household's memory: the owner's only
    os.replace(writing, target)
    return int(row[0])


def nightly_copies(folder: Path) -> list[tuple[datetime, Path]]:
    """The nightly copies in ``folder``, oldest first, each with when it was taken; files of
    other names are never counted (nor deleted)."""
    copies = []
    for path in folder.glob("engine-*.sqlite3"):
        try:
            taken = datetime.strptime(path.name, NIGHTLY).replace(tzinfo=UTC)
        except ValueError:
            continue
        copies.append((taken, path))
    return sorted(copies)


def keep_newest(folder: Path, keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest nightly copies in ``folder``; the deleted ones."""
    copies = [path for _, path in nightly_copies(folder)]
    doomed = copies[:-keep] if keep > 0 else []
    for old in doomed:
        old.unlink(missing_ok=True)
    return doomed


class NightlyCopies:
    """A copy of the engine's SQLite database a day into ``folder``, the ``keep`` newest kept."""

    def __init__(self, url: str, folder: Path, keep: int) -> None:
        self.url, self.folder, self.keep = url, folder, keep
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def due(self, now: datetime) -> bool:
        copies = nightly_copies(self.folder)
        return not copies or now - copies[-1][0] >= EVERY

    def take_if_due(self, now: datetime | None = None) -> Path | None:
        """Take today's copy if one is due, then delete the oldest past ``keep``; the copy."""
        now = now or datetime.now(UTC)
        if not self.due(now):
            return None
        target = self.folder / now.strftime(NIGHTLY)
        count = backup_database(self.url, target)
        dropped = keep_newest(self.folder, self.keep)
        logger.info(
            "Nightly copy of the engine's database: %s (%d memories, integrity check ok); "
            "%d older copies deleted, the newest %d kept",
            target,
            count,
            len(dropped),
            self.keep,
        )
        return target

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.take_if_due()
            except (BackupRefused, OSError, sqlite3.Error) as failed:
                logger.error("The nightly copy of the engine's database failed: %s", failed)
            self.stopping.wait(LOOK_SECONDS)

    def start(self) -> "NightlyCopies":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.thread = threading.Thread(target=self.run, name="engine-nightly-copy", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=30)
