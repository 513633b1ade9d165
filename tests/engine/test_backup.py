"""``python -m reference_engine backup FILE`` (and ``manage.py memory_engine --backup FILE``) while
the engine serves under write load: the copy passes SQLite's integrity check, an engine started on
it serves, and it holds every memory acknowledged before the backup began. SQLite only: a
PostgreSQL engine database is backed up with pg_dump, and the command says so."""

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from reference_engine.__main__ import main
from reference_engine.server import ReferenceEngine

from .calls import ALICE, send, turn_event
from .conftest import TOKEN


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
