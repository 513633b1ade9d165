"""An engine database from before one-memory-per-fact (migration 0005) upgrades in place with
nothing lost: every memory kept (two with the same words both stay), each given its same-words
key, none of them judged by the thinker later; a remember of those words after the upgrade keeps
no new memory."""

from yoyo import read_migrations
from yoyo.migrations import MigrationList

from reference_engine.server import ReferenceEngine
from reference_engine.storage import memories as rows
from reference_engine.storage import truth
from reference_engine.storage.database import Database
from reference_engine.storage.schema import MIGRATIONS, migrations_backend
from tests.support.engine_token import TOKEN

ALICE = {"member": "7", "name": "Alice"}
BEFORE = ["0001_initial", "0002_answer_items", "0003_block_selection", "0004_recall_meaning"]


def database_before_0005(url: str) -> list[tuple[str, str]]:
    """The database as the engine before 0005 left it; ``(id, text)`` of what it keeps."""
    database = Database(url)
    with migrations_backend(database) as yoyo:
        every = read_migrations(str(MIGRATIONS))
        yoyo.apply_migrations(yoyo.to_apply(MigrationList([m for m in every if m.id in BEFORE])))
    with database.write() as cursor:
        for text, said in (
            ("The bins go out on Tuesday.", None),
            ("the bins go out on tuesday", None),  # kept twice before: both stay
            ("Alice likes tea.", ALICE),
        ):
            scope = "private" if said else "household"
            rows.add_memory(
                cursor, "pippa", text=text, scope=scope, said_by=said, source={}, vector=False
            )
    with database.read() as cursor:
        kept = cursor.run("SELECT id, text FROM engine_items ORDER BY seq").all()
    database.close()
    return [(str(i), str(t)) for i, t in kept]


def test_a_database_from_before_0005_upgrades_in_place_with_nothing_lost(
    engine_database: str,
) -> None:
    kept = database_before_0005(engine_database)
    engine = ReferenceEngine(token=TOKEN, database=engine_database).start()  # migrates
    try:
        with engine.database.read() as cursor:
            now = cursor.run("SELECT id, text, same_key FROM engine_items ORDER BY seq").all()
            checked = truth.checked_seq(cursor, "pippa")
            fresh = truth.unjudged(cursor, "pippa", limit=10)
        assert [(i, t) for i, t, _ in now] == kept  # nothing lost, nothing merged
        assert [k for _, _, k in now] == [
            "the bins go out on tuesday",
            "the bins go out on tuesday",
            "alice likes tea",
        ]
        assert checked == 3
        assert fresh == []
        engine.state.remember("pippa", "The bins go out on TUESDAY!")
        assert len(engine.state.souls["pippa"].memories) == 3  # the same words: no new memory
        engine.state.remember("pippa", "Alice likes tea", scope="private", member="7")
        assert len(engine.state.souls["pippa"].memories) == 3
    finally:
        engine.stop()
