"""A household's engine database made before bounded blocks upgrades in place: every revision pinned
before renders the very same bytes, and the revisions after are bounded. The engine refuses a
budget the plug-in would refuse, and a failing or hanging brain door never delays a block."""

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from yoyo import read_migrations
from yoyo.migrations import MigrationList

from reference_engine.brain_client import BrainClient
from reference_engine.server import ReferenceEngine
from reference_engine.storage import memories as rows
from reference_engine.storage.database import Database
from reference_engine.storage.revisions import block_at, revision_name
from reference_engine.storage.schema import MIGRATIONS, migrations_backend
from tests.support.brain_door import NEW_SECRET
from tests.support.engine_calls import call
from tests.support.engine_token import TOKEN

ROOT = Path(__file__).resolve().parents[3]
ALICE = {"member": "7", "name": "Alice"}


def previous_engine_database(url: str) -> dict[str, tuple[list[str], str]]:
    """The engine database as the engine before bounded blocks left it (only the first
    migration), holding 300 memories; the blocks it served at its head, by viewer."""
    database = Database(url)
    with migrations_backend(database) as yoyo:
        every = read_migrations(str(MIGRATIONS))
        first = MigrationList([m for m in every if m.id == "0001_initial"])
        yoyo.apply_migrations(yoyo.to_apply(first))
    with database.write() as cursor:
        for n in range(300):
            private = n % 10 == 0
            rows.add_memory(
                cursor,
                "pippa",
                text=f"Memory {n} from the old days, when the blue tin held the good tea.",
                scope="private" if private else "household",
                said_by=ALICE if private else None,
                source={},
                vector=False,
            )
    served = {}
    with database.read() as cursor:
        for viewer in ("7", "8", None):
            served[str(viewer)] = block_at(cursor, "pippa", 300, viewer)
    database.close()
    return served


def test_blocks_pinned_before_the_upgrade_render_the_same_bytes_after_it(
    engine_database: str,
) -> None:
    served = previous_engine_database(engine_database)
    assert len(served["7"][1]) > 16000  # the old engine's block: every memory, past any budget
    engine = ReferenceEngine(token=TOKEN, database=engine_database).start()  # migrates
    try:
        for viewer in ("7", "8", None):
            params = {"viewer": viewer} if viewer else {}
            found = call(engine.url, "GET", "/v1/souls/pippa/blocks/r300", params=params).json()
            ids, text = served[str(viewer)]
            assert (found["block"], found["items"], found["left_out"]) == (text, ids, 0)
        engine.state.remember("pippa", "The first memory after the upgrade.")
        new = call(engine.url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"}).json()
        assert new["revision"] == revision_name(301)
        assert len(new["block"]) <= engine.state.block_chars
        assert "- The first memory after the upgrade." in new["block"]
        assert len(new["items"]) + new["left_out"] == 301
    finally:
        engine.stop()


def test_the_engine_refuses_to_start_with_a_budget_the_plugin_would_refuse(tmp_path: Path) -> None:
    command = [sys.executable, "manage.py", "memory_engine", "--port", "0"]
    command += ["--database", str(tmp_path / "engine.sqlite3"), "--block-chars", "20000"]
    ran = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ran.returncode != 0
    assert "above the plug-in's block limit of 16000" in ran.stderr
    assert not (tmp_path / "engine.sqlite3").exists()  # refused before anything was made


def test_a_hanging_brain_door_never_delays_or_empties_a_block(engine_database: str) -> None:
    hanging = socket.socket()  # accepts connections (its backlog) and never answers
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(8)
    door = f"http://127.0.0.1:{hanging.getsockname()[1]}/api/memory/brain/"
    brain = BrainClient(door, NEW_SECRET, timeout=4)
    engine = ReferenceEngine(
        token=TOKEN, database=engine_database, block_chars=1000, brain=brain
    ).start()
    try:
        for n in range(40):
            engine.state.remember("pippa", f"Household fact {n}: the tin on shelf {n} holds tea.")
        before = engine.state.head("pippa")
        curating = threading.Thread(
            target=engine.state.thinker.curator.curate_due, kwargs={"force": True}
        )
        curating.start()
        time.sleep(0.3)  # the curation call is now waiting on the door
        started = time.monotonic()
        found = call(engine.url, "GET", "/v1/souls/pippa/head", params={"viewer": "7"})
        assert time.monotonic() - started < 1.0
        assert found.status_code == 200
        assert "- Household fact 39: the tin on shelf 39 holds tea." in found.json()["block"]
        curating.join(timeout=30)
        assert engine.state.head("pippa") == before  # a failed choice changes nothing
    finally:
        engine.stop()
        hanging.close()
