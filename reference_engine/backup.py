"""A consistent copy of the engine's SQLite database while the engine serves: SQLite's online
backup API (``sqlite3.Connection.backup``) copies page by page, restarting when a writer changes a
page already copied, so the copy is one committed state. The copy is written beside its target,
checked (``PRAGMA integrity_check``) and only then moved into place.

A PostgreSQL engine database is backed up by PostgreSQL's own tool: :class:`BackupRefused` says
the ``pg_dump`` line (``docs/deployment.md``).
"""

import os
import sqlite3
from pathlib import Path

from reference_engine.storage.database import sqlite_path


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


def keep_newest(folder: Path, keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest nightly copies in ``folder``; the deleted ones."""
    copies = sorted(folder.glob("engine-*.sqlite3"))
    doomed = copies[:-keep] if keep > 0 else []
    for old in doomed:
        old.unlink(missing_ok=True)
    return doomed
