"""Answers are checked like blocks, on the engine's side (issue 35, point 1): each answer names the
memories it was made from (contract v3 ``items``; version 2 callers get the old shape), an answer
not yet delivered that was built on a memory since forgotten or made private to someone else is
taken back and made afresh, an answer is made from what its viewer may see when it is made (not
when it was asked), and a database written before answers kept their items upgrades in place with
nothing lost. Each test runs on SQLite and, in CI, on PostgreSQL.
"""

from typing import Any

import jsonschema
from yoyo import read_migrations
from yoyo.migrations import MigrationList

from pippa_memory.engine import contract
from reference_engine.server import ReferenceEngine
from reference_engine.storage import asks as ask_rows
from reference_engine.storage import memories as rows
from reference_engine.storage.database import Database
from reference_engine.storage.revisions import block_at
from reference_engine.storage.schema import MIGRATIONS, migrations_backend
from tests.support.engine_calls import ALICE, call, recall, send, turn_event
from tests.support.engine_token import TOKEN

CODE = "The alarm code is 249814."
BINS = "The bins go out on Tuesday."


def ask(engine: ReferenceEngine, question: str, viewer: str, conversation: str) -> str:
    body = {"soul": "pippa", "conversation": conversation, "viewer": viewer, "question": question}
    taken = call(engine.url, "POST", "/v1/asks", json=body)
    assert taken.status_code == 202, taken.text
    return taken.json()["ask_id"]


def answers(engine: ReferenceEngine, conversation: str, version: str = "3") -> list[dict[str, Any]]:
    found = call(engine.url, "GET", f"/v1/conversations/{conversation}/answers", version=version)
    assert found.status_code == 200, found.text
    if version == "3":
        jsonschema.validate(found.json(), contract.ANSWERS)
    return found.json()["answers"]


def household_code(engine: ReferenceEngine) -> str:
    """Alice's household memory of the alarm code, and one about the bins; the code's id."""
    engine.state.answer_delay = 0.0
    send(engine.url, turn_event(CODE, ALICE, scope="household"))
    send(engine.url, turn_event(BINS, ALICE, scope="household"))
    return next(i["id"] for i in recall(engine.url, "alarm code")["items"] if i["text"] == CODE)


def test_an_answer_names_the_memories_it_was_made_from_and_version_2_is_unchanged(
    durable_engine: ReferenceEngine,
) -> None:
    code = household_code(durable_engine)
    ask(durable_engine, "what is the alarm code?", "8", "conv-bob")

    [answer] = answers(durable_engine, "conv-bob")
    [old] = answers(durable_engine, "conv-bob", version="2")

    assert code in answer["items"]
    assert CODE in answer["answer"]
    assert "items" not in old
    assert old["id"] == answer["id"]


def test_a_forget_takes_back_an_undelivered_answer_built_on_it(
    durable_engine: ReferenceEngine,
) -> None:
    code = household_code(durable_engine)
    ask(durable_engine, "what is the alarm code?", "8", "conv-bob")
    [before] = answers(durable_engine, "conv-bob")

    forgot = call(durable_engine.url, "DELETE", f"/v1/souls/pippa/items/{code}?viewer=7")
    [after] = answers(durable_engine, "conv-bob")

    assert forgot.status_code == 200
    assert after["id"] != before["id"]
    assert after["ask_id"] == before["ask_id"]
    assert code not in after["items"]
    assert "249814" not in after["answer"]


def test_a_make_private_takes_back_only_other_members_answers(
    durable_engine: ReferenceEngine,
) -> None:
    code = household_code(durable_engine)
    ask(durable_engine, "what is the alarm code?", "8", "conv-bob")
    ask(durable_engine, "what is the alarm code?", "7", "conv-alice")
    [bobs], [alices] = answers(durable_engine, "conv-bob"), answers(durable_engine, "conv-alice")

    body = {"viewer": "7", "scope": "private"}
    changed = call(durable_engine.url, "PATCH", f"/v1/souls/pippa/items/{code}", json=body)

    assert changed.status_code == 200
    [bobs_now] = answers(durable_engine, "conv-bob")
    assert bobs_now["id"] != bobs["id"]
    assert "249814" not in bobs_now["answer"]
    assert answers(durable_engine, "conv-alice") == [alices]  # still hers to hear


def test_a_delivered_answer_is_left_alone_by_a_later_forget(
    durable_engine: ReferenceEngine,
) -> None:
    code = household_code(durable_engine)
    ask(durable_engine, "what is the alarm code?", "8", "conv-bob")
    [answer] = answers(durable_engine, "conv-bob")
    acked = call(durable_engine.url, "POST", "/v1/conversations/conv-bob/answers/ack",
                 json={"ids": [answer["id"]]})  # fmt: skip

    call(durable_engine.url, "DELETE", f"/v1/souls/pippa/items/{code}?viewer=7")

    assert acked.status_code == 204
    assert answers(durable_engine, "conv-bob") == []  # not offered again, nor made afresh


def test_an_answer_is_made_from_what_its_viewer_may_see_when_it_is_made(
    durable_engine: ReferenceEngine,
) -> None:
    code = household_code(durable_engine)
    durable_engine.state.answer_delay = 3600.0  # taken now, answered later
    ask_id = ask(durable_engine, "what is the alarm code?", "8", "conv-bob")
    body = {"viewer": "7", "scope": "private"}
    call(durable_engine.url, "PATCH", f"/v1/souls/pippa/items/{code}", json=body)
    durable_engine.state.clock = lambda: 10.0**12  # now the ask is due

    [answer] = answers(durable_engine, "conv-bob")

    assert answer["ask_id"] == ask_id
    assert code not in answer["items"]
    assert "249814" not in answer["answer"]


def test_an_answer_is_not_written_when_a_memory_it_used_went_away_while_it_was_made(
    durable_engine: ReferenceEngine,
) -> None:
    """The thinker writes an answer only if each memory it used is still visible: a forget that
    lands between the recall and the write (the door may take seconds) leaves the ask open."""
    code = household_code(durable_engine)
    durable_engine.state.answer_delay = 3600.0
    ask(durable_engine, "what is the alarm code?", "8", "conv-bob")
    [open_ask] = open_asks(durable_engine, "conv-bob")
    made = durable_engine.state.thinker.answer(open_ask)
    assert made is not None
    assert code in made[1]
    call(durable_engine.url, "DELETE", f"/v1/souls/pippa/items/{code}?viewer=7")

    assert durable_engine.state.thinker.write(open_ask, *made) is False
    assert open_asks(durable_engine, "conv-bob")[0]["answer_id"] is None


def open_asks(engine: ReferenceEngine, conversation: str) -> list[dict[str, Any]]:
    with engine.database.read() as cursor:
        return ask_rows.open_asks(cursor, conversation)


OLD_ASK = (
    "INSERT INTO engine_asks (id, soul, conversation, question, viewer, asked_at, ready_at, "
    "answer_id, answer, answered_at, acked) VALUES (?, 'pippa', ?, ?, '8', 't', 0, ?, ?, ?, ?)"
)


def written_before_answer_items(url: str) -> None:
    """A database as the engine left it before 0002: two memories, one answer delivered, one not."""
    database = Database(url)
    try:
        with migrations_backend(database) as yoyo:
            first = MigrationList(
                [m for m in read_migrations(str(MIGRATIONS)) if m.id == "0001_initial"]
            )
            yoyo.apply_migrations(yoyo.to_apply(first))
        with database.write() as cursor:
            for text in (CODE, BINS):
                said = {"member": "7", "name": "Alice"}
                rows.add_memory(cursor, "pippa", text=text, scope="household", said_by=said,
                                source={}, vector=False)  # fmt: skip
            cursor.run(OLD_ASK, ["ask_old1", "conv-a", "bins?", "ans_old1", BINS, "t", 1])
            cursor.run(OLD_ASK, ["ask_old2", "conv-b", "code?", "ans_old2", CODE, "t", 0])
    finally:
        database.close()


def test_a_database_from_before_answer_items_upgrades_in_place_with_nothing_lost(
    engine_database: str,
) -> None:
    written_before_answer_items(engine_database)
    before = Database(engine_database)
    with before.read() as cursor:
        delivered = cursor.run("SELECT answer FROM engine_asks WHERE id = 'ask_old1'").one()
    before.close()

    engine = ReferenceEngine(token=TOKEN, database=engine_database, answer_delay=0.0).start()
    try:
        block = engine.state.block("pippa", "r2", viewer="8")
        with engine.database.read() as cursor:
            kept = cursor.run("SELECT answer, acked FROM engine_asks WHERE id = 'ask_old1'").one()
        [fresh] = answers(engine, "conv-b")
    finally:
        engine.stop()

    assert [m.text for m in memories_of(engine_database)] == [CODE, BINS]
    assert CODE in block["block"]
    assert BINS in block["block"]
    assert tuple(kept) == (delivered[0], 1)  # the delivered answer, as it was
    assert fresh["ask_id"] == "ask_old2"
    assert fresh["id"] != "ans_old2"
    assert fresh["items"]


def memories_of(url: str) -> list[Any]:
    database = Database(url)
    try:
        with database.read() as cursor:
            return rows.live_memories(cursor, "pippa")
    finally:
        database.close()


def test_a_block_pinned_before_the_upgrade_renders_the_same_bytes_after_it(
    engine_database: str,
) -> None:
    written_before_answer_items(engine_database)
    database = Database(engine_database)
    with database.read() as cursor:
        pinned = block_at(cursor, "pippa", 2, "8")
    database.close()

    engine = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        after = call(engine.url, "GET", "/v1/souls/pippa/blocks/r2", params={"viewer": "8"})
    finally:
        engine.stop()

    assert after.status_code == 200
    assert (after.json()["items"], after.json()["block"]) == (pinned[0], pinned[1])
