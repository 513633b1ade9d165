"""The engine's schema is versioned migrations, and a household's database upgrades in place.

A database the engine wrote before migrations existed (commit bf19998, kept in ``fixtures/``) is
upgraded by ``python -m reference_engine migrate`` with every memory, revision, ask, delivered
answer and event id kept, and every pinned (revision, viewer) block rendering the very bytes the
old engine rendered; an answer written but not yet delivered names no memories, so nothing could
check it against a later forget, and its ask is re-opened to be answered again (privacy outranks
keeping an uncheckable answer); ``migrate --check`` names what is pending. A migration killed half-way is applied whole
at the next start, and no DDL runs anywhere but in a migration.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from yoyo.backends.base import DatabaseBackend

from reference_engine.state import EngineState
from reference_engine.storage import asks as ask_rows
from reference_engine.storage import schema
from reference_engine.storage.database import Database
from reference_engine.storage.migrations_support import is_sqlite
from tests.support.engine_migrating import (
    ROOT,
    engine_command,
    load_pre_migration_database,
    reading,
)

TABLES = {  # as fixtures/make_pre_migration.py read them from the old engine
    "engine_souls": "soul, head",
    "engine_items": "id, soul, text, scope, owner, added_rev, forgotten_rev",
    "engine_scopes": "item_seq, rev, scope",
    "engine_events": "id, soul",
    "engine_asks": "id, conversation, viewer, answer_id, answer, acked",
}


def rows_of(database: Database) -> dict[str, list[list[Any]]]:
    with database.read() as cursor:
        return {
            table: [list(row) for row in cursor.run(f"SELECT {cols} FROM {table} ORDER BY 1").all()]
            for table, cols in TABLES.items()
        }


def reopened(old: dict[str, list[list[Any]]]) -> list[list[Any]]:
    """The old engine's ask rows as the upgrade keeps them: each ask, its conversation, viewer
    and delivered answer as they were; an answer written but not yet delivered (it names no
    memories, so a forget could not be checked against it) taken back, its ask open again."""
    asks = old["engine_asks"]
    undelivered = [row for row in asks if row[3] is not None and not row[5]]
    assert undelivered, "the fixture must hold an undelivered answer, or this checks nothing"
    return [[*row[:3], None, None, row[5]] if row in undelivered else row for row in asks]


def blocks_of(state: EngineState, pinned: list[list[Any]]) -> list[list[Any]]:
    """Each (soul, revision, viewer) the old engine rendered, rendered by this engine."""
    rendered = []
    for soul, revision, viewer, _, _ in pinned:
        try:
            block = state.block(soul, revision, viewer=viewer)
        except Exception as gone:
            rendered.append([soul, revision, viewer, type(gone).__name__, None])
            continue
        rendered.append([soul, revision, viewer, block["block"], block["items"]])
    return rendered


def test_a_database_made_before_migrations_upgrades_in_place_with_nothing_lost(
    engine_database: str,
) -> None:
    old = load_pre_migration_database(engine_database)

    check = engine_command("migrate", "--check", "--database", engine_database)
    assert (check.returncode, check.stdout.splitlines()[0]) == (1, "pending: 0001_initial")
    applied = engine_command("migrate", "--database", engine_database)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[0] == "applied: 0001_initial"
    again = engine_command("migrate", "--check", "--database", engine_database)
    assert (again.returncode, again.stdout.strip()) == (
        0,
        f"0 migration(s) pending on {engine_database}.",
    )

    database = Database(engine_database)
    state = EngineState(database)  # as the engine starts: nothing is left to apply
    try:
        assert rows_of(database) == {**old["ids"], "engine_asks": reopened(old["ids"])}
        with database.read() as cursor:
            due = {ask["id"] for ask in ask_rows.due_asks(cursor, time.time(), limit=100)}
        assert due >= {row[0] for row in old["ids"]["engine_asks"] if not row[5]}
        assert blocks_of(state, old["blocks"]) == old["blocks"]
        assert {soul: state.head(soul) for soul in old["heads"]} == old["heads"]
        found = state.recall("pippa", "where is the tea kept", 5, viewer="7")
        assert found["match"] == "words"
        assert "blue tin" in found["items"][0]["text"]
        head = state.remember("pippa", "The gutters were cleared in May.")
        assert head == f"r{int(old['heads']['pippa'][1:]) + 1}"  # the counter moves on
        newest = state.items("pippa", viewer=None, limit=1)["items"][0]
        assert newest["text"] == "The gutters were cleared in May."
        assert newest["id"] not in {row[0] for row in old["ids"]["engine_items"]}
    finally:
        database.close()


def test_migrate_reports_a_new_database_up_to_date_after_applying_every_migration(
    tmp_path: Path,
) -> None:
    target = str(tmp_path / "fresh.sqlite3")
    first = engine_command("migrate", "--database", target)
    second = engine_command("migrate", "--database", target)

    assert first.returncode == second.returncode == 0
    every = sorted(path.stem for path in schema.MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.py"))
    assert first.stdout.splitlines() == [
        *(f"applied: {name}" for name in every),
        f"{len(every)} migration(s) applied; {target} is up to date.",
    ]
    assert second.stdout.splitlines() == [f"No migration(s) applied; {target} is up to date."]


SLOW_MIGRATION = """
import time
from pathlib import Path

from yoyo import step

from reference_engine.storage.migrations_support import is_sqlite

__depends__ = {"0001_initial"}


def apply(connection):
    cursor = connection.cursor()
    cursor.execute("ALTER TABLE engine_items ADD COLUMN slow_note TEXT")
    if Path(MARKER).parent.joinpath("slow").exists():
        Path(MARKER).touch()  # half-way: the column is added, the table not yet made
        time.sleep(120)
    cursor.execute("CREATE TABLE slow_done (id INTEGER PRIMARY KEY)")
    cursor.close()


steps = [step(apply)]
"""


def migrations_with_a_slow_one(folder: Path) -> tuple[Path, Path]:
    """The engine's migrations plus ``0002_slow`` (an ALTER, which cannot run twice, then a pause
    while a ``slow`` file exists, then a CREATE); the folder and the half-way marker."""
    shutil.copytree(schema.MIGRATIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    marker = folder / "half-way"
    text = SLOW_MIGRATION.replace("MARKER", repr(str(marker)))
    (folder / "0002_slow.py").write_text(text)
    (folder / "slow").touch()
    return folder, marker


def migrated_state(url: str) -> dict[str, Any]:
    """What ``0002_slow`` left: its column, its table, and how often it is recorded."""
    with reading(url) as cursor:
        recorded = cursor.run(
            "SELECT COUNT(*) FROM _yoyo_migration WHERE migration_id = '0002_slow'"
        ).one()[0]
        raw = cursor.raw.connection
        if is_sqlite(raw):
            columns = [row[1] for row in cursor.run("PRAGMA table_info(engine_items)").all()]
            tables = [r[0] for r in cursor.run("SELECT name FROM sqlite_master").all()]
        else:
            columns = [
                row[0]
                for row in cursor.run(
                    "SELECT column_name FROM information_schema.columns WHERE "
                    "table_schema = current_schema() AND table_name = 'engine_items'"
                ).all()
            ]
            tables = [
                row[0]
                for row in cursor.run(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema()"
                ).all()
            ]
    return {"column": "slow_note" in columns, "table": "slow_done" in tables, "recorded": recorded}


def test_a_migration_killed_half_way_is_applied_whole_at_the_next_start(
    engine_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, marker = migrations_with_a_slow_one(tmp_path / "migrations")
    EngineState(Database(engine_database)).database.close()  # 0001 applied, as a running engine
    starting = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from reference_engine.storage import schema; "
            "from reference_engine.storage.database import Database; "
            "schema.MIGRATIONS = Path(sys.argv[1]); schema.migrate(Database(sys.argv[2]))",
            str(folder),
            engine_database,
        ],
        cwd=ROOT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert starting.poll() is None, "the start ended before 0002 was half-way"
        assert time.monotonic() < deadline, "0002 never got half-way"
        time.sleep(0.05)
    os.killpg(starting.pid, signal.SIGKILL)
    starting.wait(timeout=30)
    assert migrated_state(engine_database) == {"column": False, "table": False, "recorded": 0}

    (folder / "slow").unlink()  # the next start runs it at full speed
    monkeypatch.setattr(schema, "MIGRATIONS", folder)
    EngineState(Database(engine_database)).database.close()  # the next start

    assert migrated_state(engine_database) == {"column": True, "table": True, "recorded": 1}
    assert schema.migrate(Database(engine_database)) == []


def test_a_migration_and_the_row_recording_it_commit_together(
    engine_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that dies after a migration's steps but before its record must not leave the
    steps behind (the next start would run the ALTER again, and fail): they are one transaction."""
    EngineState(Database(engine_database)).database.close()  # 0001 applied, as a running engine
    folder, _ = migrations_with_a_slow_one(tmp_path / "migrations")
    (folder / "slow").unlink()
    monkeypatch.setattr(schema, "MIGRATIONS", folder)

    def dies_before_recording(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died here")

    with monkeypatch.context() as dying:
        dying.setattr(DatabaseBackend, "mark_one", dies_before_recording)
        with pytest.raises(RuntimeError):
            schema.migrate(Database(engine_database))
    assert migrated_state(engine_database) == {"column": False, "table": False, "recorded": 0}

    assert schema.migrate(Database(engine_database)) == ["0002_slow"]
    assert migrated_state(engine_database) == {"column": True, "table": True, "recorded": 1}


DDL = re.compile(
    r"\b(CREATE\s+(UNIQUE\s+)?INDEX|CREATE\s+(VIRTUAL\s+)?TABLE|ALTER\s+(TABLE|INDEX))\b", re.I
)


def test_no_table_or_index_is_made_outside_a_migration() -> None:
    """Every index is in a migration: none is made by a thread (the thinker's, once) or a
    request at run time."""
    package = ROOT / "reference_engine"
    makers = [
        str(path.relative_to(ROOT))
        for path in package.rglob("*.py")
        if "migrations" not in path.relative_to(package).parts[:-1]
        and path.name != "migrations_support.py"
        and DDL.search(path.read_text(encoding="utf-8"))
    ]
    assert makers == []
