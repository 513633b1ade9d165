"""``python -m reference_engine backup FILE`` (and ``manage.py memory_engine --backup FILE``) while
the engine serves under write load: the copy passes SQLite's integrity check, an engine started on
it serves, and it holds every memory acknowledged before the backup began. SQLite only: a
PostgreSQL engine database is backed up with pg_dump, and the command says so."""

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reference_engine.__main__ import main
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, send, turn_event
from tests.support.engine_token import TOKEN


def test_a_backup_under_write_load_restores_with_every_acknowledged_memory(tmp_path: Path) -> None:
    database = tmp_path / "engine.sqlite3"
    engine = ReferenceEngine(token=TOKEN, database=str(database)).start()
    acknowledged: list[str] = []
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set():
            answer = send(engine.url, turn_event(f"Memory number {n}", ALICE, scope="private"))
            if answer.status_code == 202:
                acknowledged.append(f"Memory number {n}")
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acknowledged) < 50:
            threading.Event().wait(0.01)
        before = list(acknowledged)
        copy = tmp_path / "backup" / "engine-copy.sqlite3"
        assert main(["backup", "--database", str(database), str(copy)]) == 0
    finally:
        stop.set()
        writer.join()
        engine.stop()

    with sqlite3.connect(copy) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    restored = ReferenceEngine(token=TOKEN, database=str(copy)).start()
    try:
        texts = {m.text for m in restored.state.souls["pippa"].memories}
    finally:
        restored.stop()
    assert set(before) <= texts


def test_a_postgresql_database_is_refused_with_the_pg_dump_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["backup", "--database", "postgres://u@h/engine", str(tmp_path / "x")])

    assert code == 1
    assert "pg_dump" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_manage_py_memory_engine_backup_hands_over_to_the_engine(tmp_path: Path) -> None:
    database = tmp_path / "engine.sqlite3"
    engine = ReferenceEngine(token=TOKEN, database=str(database)).start()
    send(engine.url, turn_event("Kept by the backup", ALICE))
    engine.stop()
    copy = tmp_path / "copy.sqlite3"

    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "memory_engine",
            "--database",
            str(database),
            "--backup",
            str(copy),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    with sqlite3.connect(copy) as check:
        assert check.execute("SELECT text FROM engine_items").fetchall() == [
            ("Kept by the backup",)
        ]


def test_the_engine_keeps_a_copy_a_day_and_the_newest_few(tmp_path: Path) -> None:
    """``--backup-dir``: an engine whose newest copy is a day old takes one at start, checked, and
    deletes the oldest past ``--backup-keep``; a file that is not a nightly copy is left alone."""
    from tests.support.engine_processes import engine_process

    database = tmp_path / "engine.sqlite3"
    seeded = ReferenceEngine(token=TOKEN, database=str(database)).start()
    assert send(seeded.url, turn_event("Kept by the nightly copy", ALICE)).status_code == 202
    seeded.stop()
    folder = tmp_path / "copies"
    folder.mkdir()
    old = [folder / f"engine-2026110{day}-020000.sqlite3" for day in (1, 2, 3)]
    for path in old:
        path.write_bytes(b"an older copy")
    (folder / "notes.txt").write_text("the household's own file")
    with engine_process(str(database), "--backup-dir", str(folder), "--backup-keep", "2"):
        deadline = time.monotonic() + 30
        while len(list(folder.glob("engine-2026*.sqlite3"))) != 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        copies = sorted(folder.glob("engine-*.sqlite3"))
    assert copies[0] == old[-1]  # the newest older copy kept, the two before it deleted
    taken = copies[1]
    assert taken.name > old[-1].name
    assert taken.stat().st_mode & 0o077 == 0  # a household's memory: the owner's only
    with sqlite3.connect(taken) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert check.execute("SELECT text FROM engine_items").fetchall() == [
            ("Kept by the nightly copy",)
        ]
    assert (folder / "notes.txt").read_text() == "the household's own file"


def test_a_copy_is_not_due_until_the_newest_is_a_day_old(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from reference_engine.backup import NightlyCopies

    database = tmp_path / "engine.sqlite3"
    ReferenceEngine(token=TOKEN, database=str(database)).start().stop()
    copies = NightlyCopies(str(database), tmp_path / "copies", keep=3)
    (tmp_path / "copies").mkdir()
    noon = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

    first = copies.take_if_due(noon)
    assert first is not None
    assert first.name == "engine-20261205-120000.sqlite3"
    assert copies.take_if_due(noon + timedelta(hours=23, minutes=59)) is None
    assert copies.take_if_due(noon + timedelta(days=1)) is not None
    assert len(list((tmp_path / "copies").iterdir())) == 2


def test_a_backup_folder_for_a_postgresql_engine_is_refused_at_start() -> None:
    from reference_engine.config import ConfigError, read_config

    flags = {"database": "postgres://u@h/engine", "backup_dir": "/tmp/copies"}
    with pytest.raises(ConfigError, match="pg_dump"):
        read_config(flags, environ={})
