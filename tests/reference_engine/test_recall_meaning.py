"""Recall finds what was meant and says how it matched, on both databases: a question in other
words finds its memory by meaning, word forms match, stop words alone match nothing, each item's
``matched_by`` is honest, another member's private memory is never found by meaning, an old
database's memories are backfilled, and ``--recall words`` answers as word-only recall did."""

import pytest

from reference_engine.server import ReferenceEngine
from reference_engine.state import EngineState
from reference_engine.storage.database import Database
from reference_engine.storage.ranking import query_words
from tests.support.engine_calls import recall
from tests.support.engine_migrating import database_at_0003
from tests.support.engine_token import TOKEN

PEANUTS = "Ella is allergic to peanuts"
BOILER = "the boiler engineer comes on Friday morning"
SWIMS = "Anna swims at the leisure centre"
EMAIL = "Write to alice@example.com about the party"
ROUTER = "The router page is at http://192.168.1.1/admin"
FIRMWARE = "The boiler firmware is version 2.4.1"
ZEBRA = "The zebra crossing is by the school gate"
HOUSEHOLD = [PEANUTS, BOILER, SWIMS, EMAIL, ROUTER, FIRMWARE, ZEBRA]

# The same queries, the same answers, on SQLite and on PostgreSQL (query, memory, matched_by).
QUERY_SET = [
    ("which nuts can't my daughter eat", PEANUTS, "meaning"),
    ("when does Anna go swimming", SWIMS, "words"),
    ("alice@example.com", EMAIL, "words"),
    ("http://192.168.1.1/admin", ROUTER, "words"),
    ("is it version 2.4.1", FIRMWARE, "words"),
    (
        "apple banana cherry date elder fig grape honey iris jam kiwi lemon mango nectar olive "
        "pear quince zebra",
        ZEBRA,
        "words",
    ),  # fmt: skip
]


def kept(engine: ReferenceEngine, texts: list[str]) -> None:
    for text in texts:
        engine.state.remember("pippa", text)


def texts(found: dict) -> list[str]:
    return [i["text"] for i in found["items"]]


@pytest.mark.parametrize(("query", "memory", "how"), QUERY_SET)
def test_both_databases_find_the_same_memory_for_each_query(
    durable_engine: ReferenceEngine, query: str, memory: str, how: str
) -> None:
    kept(durable_engine, HOUSEHOLD)

    found = recall(durable_engine.url, query, limit=3)

    assert found["items"][0]["text"] == memory
    assert found["items"][0]["matched_by"] == how
    assert found["match"] == ("meaning" if how == "meaning" and all(
        i["matched_by"] == "meaning" for i in found["items"]) else "words")  # fmt: skip


def test_a_question_in_other_words_finds_its_memory_by_meaning(
    durable_engine: ReferenceEngine,
) -> None:
    kept(durable_engine, HOUSEHOLD)

    found = recall(durable_engine.url, "which nuts can't my daughter eat", limit=3)

    assert found["match"] == "meaning"
    assert found["items"][0]["text"] == PEANUTS
    assert {i["matched_by"] for i in found["items"]} == {"meaning"}


@pytest.mark.xfail(
    strict=True,
    reason="WordLlama's static vectors put 'heating repairman' and 'boiler engineer' at cosine "
    "0.05, far below the 0.20 threshold: the issue's own example is not found by meaning",
)
def test_the_heating_repairman_finds_the_boiler_engineer(durable_engine: ReferenceEngine) -> None:
    kept(durable_engine, HOUSEHOLD)

    found = recall(durable_engine.url, "when is the heating repairman visiting", limit=3)

    assert (found["match"], found["items"][0]["text"]) == ("meaning", BOILER)


def test_stop_words_alone_match_nothing(durable_engine: ReferenceEngine) -> None:
    kept(durable_engine, ["The bins go out on Tuesday", "When is it the turn of the car"])

    for query in ("is the when", "what is it", "when is the"):
        found = recall(durable_engine.url, query, limit=2)
        assert found["match"] == "fallback", query
        assert all("matched_by" not in i for i in found["items"])


def test_word_forms_match_by_words(durable_engine: ReferenceEngine) -> None:
    kept(durable_engine, [SWIMS, "Tom walked the dog yesterday"])

    found = recall(durable_engine.url, "when does Anna go swimming", limit=5)
    walks = recall(durable_engine.url, "who walks the dog", limit=5)

    assert (found["match"], found["items"][0]["text"]) == ("words", SWIMS)
    assert found["items"][0]["matched_by"] == "words"
    assert walks["items"][0]["text"] == "Tom walked the dog yesterday"
    assert walks["items"][0]["matched_by"] == "words"


def test_matched_by_is_honest_for_every_item(durable_engine: ReferenceEngine) -> None:
    kept(durable_engine, HOUSEHOLD)
    query = "which nuts can't my daughter Anna eat"

    found = recall(durable_engine.url, query, limit=7)

    assert found["match"] == "words"
    stems = {"nut", "anna", "eat", "daughter"}  # the query's words as Porter stems them
    assert set(query_words(query)) == {"anna", "daughter", "eat", "nuts"}
    for item in found["items"]:
        holds = any(word.lower().rstrip(".").startswith(stem) for word in item["text"].split()
                    for stem in stems)  # fmt: skip
        assert item["matched_by"] == ("words" if holds else "meaning"), item["text"]
    by_text = {i["text"]: i["matched_by"] for i in found["items"]}
    assert (by_text[SWIMS], by_text[PEANUTS]) == ("words", "meaning")


def test_another_members_private_memory_is_never_found_by_meaning(
    durable_engine: ReferenceEngine,
) -> None:
    durable_engine.state.remember("pippa", "The bins go out on Tuesday")
    durable_engine.state.remember("pippa", PEANUTS, scope="private", member="8", name="Bob")

    alice = recall(durable_engine.url, "which nuts can't my daughter eat", viewer="7", limit=5)
    household = recall(durable_engine.url, "which nuts can't my daughter eat", limit=5)
    bob = recall(durable_engine.url, "which nuts can't my daughter eat", viewer="8", limit=5)

    assert PEANUTS not in texts(alice)
    assert PEANUTS not in texts(household)
    assert alice["match"] == household["match"] == "fallback"
    assert (bob["match"], texts(bob)[0]) == ("meaning", PEANUTS)


def test_past_the_exact_size_a_shortlist_by_sign_bits_still_finds_the_meaning_and_no_other_private(
    durable_engine: ReferenceEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A soul with more vectors than are scored exactly is searched through the sign-bit
    shortlist: the memory meant is still found, and visibility still comes before the limit."""
    import reference_engine.meaning as meaning

    monkeypatch.setattr(meaning, "EXACT_UP_TO", 8)
    monkeypatch.setattr(meaning, "SHORTLIST", 6)
    fillers = [f"Note {n}: the {thing} is kept in the {place}" for n, (thing, place) in enumerate(
        [(t, p) for t in ("ladder", "drill", "tent", "kite") for p in ("shed", "loft", "garage")])]  # fmt: skip
    kept(durable_engine, [*fillers, PEANUTS])
    durable_engine.state.remember(
        "pippa", "Sam is allergic to cashew nuts", scope="private", member="8", name="Bob"
    )

    alice = recall(durable_engine.url, "which nuts can't my daughter eat", viewer="7", limit=3)

    assert (alice["match"], texts(alice)[0]) == ("meaning", PEANUTS)
    assert "Sam is allergic to cashew nuts" not in texts(alice)


def test_a_memory_holding_every_word_of_the_query_comes_first_whatever_meaning_says() -> None:
    from reference_engine.recall import fused
    from reference_engine.souls import Memory

    def memory(seq: int, text: str) -> Memory:
        return Memory(f"m{seq}", text, "", "household", None, {}, seq)

    exact = memory(1, "The garage door code is 4471")
    near = [memory(n, f"Door note {n}") for n in range(2, 12)]

    ranked = fused([memory(12, "4471 spare"), exact], near, 5, "garage code 4471")

    assert ranked[0] == exact  # by weight alone it would rank below every meaning match


def test_recall_words_answers_as_word_only_recall_did(engine_database: str) -> None:
    engine = ReferenceEngine(token=TOKEN, database=engine_database, recall="words").start()
    try:
        kept(engine, HOUSEHOLD)
        other_words = recall(engine.url, "which nuts can't my daughter eat", limit=3)
        same_words = recall(engine.url, "when does Anna go swimming", limit=3)
    finally:
        engine.stop()

    assert other_words["match"] == "fallback"
    assert (same_words["match"], texts(same_words)) == ("words", [SWIMS])


def test_an_old_database_is_upgraded_then_backfilled_then_found_by_meaning(
    engine_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    database_at_0003(engine_database, [PEANUTS, SWIMS], notes=1200)
    database = Database(engine_database)
    state = EngineState(database)  # applies 0004; the backfill has not run yet
    try:
        question = "which nuts can't my daughter eat"
        before = state.recall("pippa", question, 3)
        by_words = state.recall("pippa", "when does Anna go swimming", 3)
        assert before["match"] == "fallback"  # no vectors yet: words only
        assert (by_words["match"], by_words["items"][0]["text"]) == ("words", SWIMS)

        caplog.set_level("INFO", logger="reference_engine.backfill")
        state.backfill.start()
        assert state.backfill.done.wait(timeout=120)
        after = state.recall("pippa", question, 3)
    finally:
        state.backfill.stop()
        database.close()

    assert (after["match"], after["items"][0]["text"]) == ("meaning", PEANUTS)
    assert state.backfill.filled == 1202
    assert "meaning backfill: 500/1202" in caplog.text
    assert "meaning backfill: 1202/1202" in caplog.text
