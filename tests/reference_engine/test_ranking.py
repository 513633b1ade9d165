"""Ranked recall: every word of the query counts, more of them ranks first, ties go to the most
recent, and visibility is applied in the query, never after the limit."""

from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import recall

FILLER = ["garden", "kettle", "window", "bicycle", "library", "orange", "pillow", "ladder"]


def fill(engine: ReferenceEngine, count: int) -> None:
    """``count`` household memories, each holding one or two of the filler words."""
    with engine.database.write() as cursor:
        from reference_engine.storage.memories import add_memory

        for number in range(count):
            words = f"{FILLER[number % 8]} {FILLER[(number * 3 + 1) % 8]}"
            text = f"note {number}: the {words} thing"
            add_memory(cursor, "pippa", text=text, scope="household", said_by=None, source={})


def test_the_memory_holding_every_query_word_comes_first_among_thousands(
    durable_engine: ReferenceEngine,
) -> None:
    durable_engine.state.remember("pippa", "The garden kettle sits by the library window.")
    fill(durable_engine, 3000)

    found = recall(durable_engine.url, "garden kettle library window", limit=5)

    assert found["match"] == "words"
    assert found["items"][0]["text"] == "The garden kettle sits by the library window."
    assert len(found["items"]) == 5


def test_any_word_of_the_query_counts_and_stop_words_do_not(
    durable_engine: ReferenceEngine,
) -> None:
    durable_engine.state.remember("pippa", "The bins go out on Tuesday.")
    durable_engine.state.remember("pippa", "Ada's birthday is in December.")

    found = recall(durable_engine.url, "what is the day for the bins and the recycling")

    assert [i["text"] for i in found["items"]] == ["The bins go out on Tuesday."]


def test_equal_matches_go_to_the_most_recent_first(durable_engine: ReferenceEngine) -> None:
    """By words alone (meaning tells the three days apart, so fused they are not equal)."""
    durable_engine.state.recall_mode = "words"
    for day in ("Monday", "Tuesday", "Wednesday"):
        durable_engine.state.remember("pippa", f"Swimming lesson {day}")

    found = recall(durable_engine.url, "swimming lesson", limit=2)

    assert [i["text"] for i in found["items"]] == [
        "Swimming lesson Wednesday",
        "Swimming lesson Tuesday",
    ]


def test_visibility_is_applied_before_the_limit(durable_engine: ReferenceEngine) -> None:
    durable_engine.state.remember("pippa", "The piano tuner comes on Friday.")
    for number in range(60):  # newer, better matches that only Bob may see
        durable_engine.state.remember(
            "pippa", f"piano tuner piano tuner secret {number}", scope="private", member="8"
        )

    alice = recall(durable_engine.url, "piano tuner", viewer="7", limit=3)
    bob = recall(durable_engine.url, "piano tuner", viewer="8", limit=3)

    assert [i["text"] for i in alice["items"]] == ["The piano tuner comes on Friday."]
    assert alice["match"] == "words"
    assert all("secret" in i["text"] for i in bob["items"])


def test_no_match_falls_back_to_the_most_recent_and_says_so(
    durable_engine: ReferenceEngine,
) -> None:
    for text in ("one thing", "two things", "three things"):
        durable_engine.state.remember("pippa", text)

    found = recall(durable_engine.url, "submarine", limit=2)

    assert found["match"] == "fallback"
    assert [i["text"] for i in found["items"]] == ["two things", "three things"]
    assert found["fallback"]["reason"] == "no memory matched the query"


def test_memories_added_in_bulk_are_ranked_by_recall_at_one_new_revision(
    durable_engine: ReferenceEngine,
) -> None:
    from reference_engine.storage.memories import add_household_memories

    durable_engine.state.remember("pippa", "The kettle is in the garden shed.")
    texts = [f"note {n}: the {FILLER[n % 8]} thing" for n in range(2000)]
    texts.insert(700, "The blue tin on the library shelf holds the tea.")
    with durable_engine.database.write() as cursor:
        add_household_memories(cursor, "pippa", texts)

    assert durable_engine.state.head("pippa") == "r2"  # one revision for the whole import
    found = recall(durable_engine.url, "blue tin library tea", limit=3)
    assert found["items"][0]["text"] == "The blue tin on the library shelf holds the tea."
    assert found["items"][0]["scope"] == "household"
    block = durable_engine.state.block("pippa", "r2")
    assert len(block["block"]) <= durable_engine.state.block_chars
    assert len(block["items"]) + block["left_out"] == 2002  # every memory, held or counted
    assert block["block"].endswith("the memory tool's recall finds them.")
    assert durable_engine.state.block("pippa", "r1")["items"] != block["items"]
