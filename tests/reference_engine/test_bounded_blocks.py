"""A block stays within its budget, holds what matters by the fair rule, and says what it left out;
a revision names one text for ever. Over real sockets, on SQLite and on PostgreSQL."""

import re
from collections.abc import Iterator
from typing import Any

import pytest

from reference_engine.selection import same_words
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import ALICE, call, send, turn_event
from tests.support.engine_token import TOKEN

BUDGET = 1000
FOOTER = re.compile(r"^(\d+) more memor(?:y is|ies are) not shown here: the memory tool's recall")


@pytest.fixture
def small_engine(engine_database: str) -> Iterator[ReferenceEngine]:
    """The engine in this process with a small budget, so a few dozen memories outgrow it."""
    running = ReferenceEngine(token=TOKEN, database=engine_database, block_chars=BUDGET).start()
    yield running
    running.stop()


def head(url: str, viewer: str | None = "7", *, version: str = "3") -> dict[str, Any]:
    query = {"viewer": viewer} if viewer else {}
    found = call(url, "GET", "/v1/souls/pippa/head", params=query, version=version)
    assert found.status_code == 200, found.text
    return found.json()


def block(url: str, revision: str, viewer: str | None = "7") -> Any:
    query = {"viewer": viewer} if viewer else {}
    return call(url, "GET", f"/v1/souls/pippa/blocks/{revision}", params=query)


def household_fact(n: int) -> str:
    return f"Household fact number {n}: the blue tin on shelf {n % 7} holds tea for guests."


def test_a_block_of_many_memories_stays_within_budget_holds_the_newest_and_counts_the_rest(
    small_engine: ReferenceEngine,
) -> None:
    for n in range(60):  # through the event route, as the plug-in delivers them
        event = turn_event(household_fact(n), ALICE, scope="household")
        assert send(small_engine.url, event).status_code == 202
    found = head(small_engine.url)
    text = found["block"]
    assert len(text) <= BUDGET
    lines = text.split("\n")
    assert lines[0] == "What I remember:"
    assert f"- {household_fact(59)}" in lines  # the newest, whole
    held_lines = lines[1:-1]
    assert all(line[2:] in {household_fact(n) for n in range(60)} for line in held_lines)  # uncut
    assert len(held_lines) == len(found["items"])
    counted = FOOTER.match(lines[-1])
    assert counted is not None, lines[-1]
    assert int(counted.group(1)) == found["left_out"] == 60 - len(found["items"]) > 0


def test_a_members_own_memories_keep_their_share_beside_the_households(
    small_engine: ReferenceEngine,
) -> None:
    state = small_engine.state
    for n in range(5):
        state.remember(
            "pippa",
            f"Alice's own note {n}: she likes her tea strong.",
            scope="private",
            member="7",
            name="Alice",
        )
    for n in range(60):
        state.remember("pippa", household_fact(n))
    found = head(small_engine.url)
    own = [line for line in found["block"].split("\n") if line.startswith("- (private)")]
    assert len(own) == 5  # all of Alice's, though sixty household memories came after them
    assert sum(len(line) + 1 for line in own) < BUDGET // 3 + 50
    assert f"- {household_fact(59)}" in found["block"]
    bob = head(small_engine.url, "8")
    assert "(private)" not in bob["block"]  # never another member's
    assert bob["left_out"] == 60 - len(bob["items"])


def test_the_same_words_stand_once_in_a_block(small_engine: ReferenceEngine) -> None:
    state = small_engine.state
    for text in (
        "The bins go out on Tuesday.",
        "the bins  go out on tuesday",
        "The BINS go out on Tuesday!",
    ):
        state.remember("pippa", text)
    found = head(small_engine.url)
    lines = found["block"].split("\n")[1:]
    memory_lines = [line for line in lines if line.startswith("- ")]
    assert len(memory_lines) == 1
    # One memory (issue 36): the words said again are the one kept, made the most recent.
    assert memory_lines[0] == "- The bins go out on Tuesday."
    assert found["left_out"] == 0
    assert len(state.souls["pippa"].memories) == 1
    assert len({same_words(line[2:]) for line in memory_lines}) == len(memory_lines)


def test_another_members_private_memories_said_again_never_crowd_out_the_viewers(
    small_engine: ReferenceEngine,
) -> None:
    state = small_engine.state
    bins = "The bins go out on Tuesday."
    state.remember("pippa", bins)
    for n in range(60):
        state.remember("pippa", household_fact(n))
    assert bins not in head(small_engine.url)["block"]  # too old to fit
    state.remember("pippa", bins)  # said again: the most recent the household said
    bobs = [f"Bob's own note {n}: the gym locker is {n}." for n in range(210)]
    for _ in range(2):  # each said again, after the bins: more than a page of them
        for text in bobs:
            state.remember("pippa", text, scope="private", member="8", name="Bob")

    alices = head(small_engine.url)["block"]

    assert f"- {bins}" in alices
    assert "Bob's own note" not in alices
    assert "Bob's own note 209" in head(small_engine.url, "8")["block"]


def test_keep_in_every_chat_is_set_by_patch_moves_the_head_and_leads_every_new_block(
    small_engine: ReferenceEngine,
) -> None:
    state = small_engine.state
    state.remember("pippa", "Grandma's birthday is on the ninth of May.")
    for n in range(60):
        state.remember("pippa", household_fact(n))
    old = head(small_engine.url)
    assert "Grandma" not in old["block"]  # too old to fit
    item_id = state.souls["pippa"].memories[0].id
    path = f"/v1/souls/pippa/items/{item_id}"
    marked = call(small_engine.url, "PATCH", path, json={"viewer": "7", "keep": True})
    assert marked.status_code == 200, marked.text
    assert marked.json()["item"]["keep"] is True
    assert marked.json()["revision"] != old["revision"]
    again = call(small_engine.url, "PATCH", path, json={"viewer": "7", "keep": True})
    assert again.json()["revision"] == marked.json()["revision"]  # what it has: no change
    new = head(small_engine.url)
    assert "- Grandma's birthday is on the ninth of May." in new["block"]
    assert f"- {household_fact(59)}" in new["block"]
    assert block(small_engine.url, old["revision"]).json()["block"] == old["block"]
    bad = call(small_engine.url, "PATCH", path, json={"viewer": "7", "keep": "yes"})
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_keep")
    assert head(small_engine.url)["revision"] == new["revision"]  # a refusal changes nothing


def test_a_version_2_caller_sees_neither_keep_nor_left_out(small_engine: ReferenceEngine) -> None:
    small_engine.state.remember("pippa", "The bins go out on Tuesday.")
    assert "left_out" not in head(small_engine.url, version="2")
    listing = call(small_engine.url, "GET", "/v1/souls/pippa/items", version="2").json()
    assert "keep" not in listing["items"][0]
    v3 = call(small_engine.url, "GET", "/v1/souls/pippa/items").json()
    assert v3["items"][0]["keep"] is False


def test_a_revision_renders_the_same_bytes_after_curation_restart_and_a_forget_elsewhere(
    engine_database: str,
) -> None:
    from reference_engine.curation import record_choice

    engine = ReferenceEngine(token=TOKEN, database=engine_database, block_chars=BUDGET).start()
    try:
        state = engine.state
        for n in range(60):
            state.remember("pippa", household_fact(n))
        pinned = head(engine.url)
        oldest = state.souls["pippa"].memories[0]
        assert oldest.id not in pinned["items"]
        with state.database.write() as cursor:  # a curation choosing the oldest memory
            assert record_choice(cursor, "pippa", "", [oldest.seq], judged_by="test", notes="")
        curated = head(engine.url)
        assert curated["revision"] != pinned["revision"]  # the choice moved the head
        assert f"- {oldest.text}" in curated["block"]
        assert block(engine.url, pinned["revision"]).json() == pinned
    finally:
        engine.stop()
    engine = ReferenceEngine(token=TOKEN, database=engine_database, block_chars=2000).start()
    try:  # restarted, with another budget
        assert block(engine.url, pinned["revision"]).json() == pinned
        unheld = engine.state.souls["pippa"].memories[1]  # neither held nor the oldest
        assert unheld.id not in pinned["items"]
        forgot = call(
            engine.url, "DELETE", f"/v1/souls/pippa/items/{unheld.id}", params={"viewer": "7"}
        )
        assert forgot.status_code == 200
        assert block(engine.url, pinned["revision"]).json() == pinned
        held = pinned["items"][0]
        call(engine.url, "DELETE", f"/v1/souls/pippa/items/{held}", params={"viewer": "7"})
        assert block(engine.url, pinned["revision"]).status_code == 410
    finally:
        engine.stop()


def test_a_memory_forgotten_while_its_block_is_chosen_is_never_in_that_block(
    small_engine: ReferenceEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block is rendered from the rows read to choose it only when nothing was forgotten
    since: a forget that lands between the choice and the answer makes the revision gone."""
    import reference_engine.blocks as blocks

    secret = "The spare key is under the third flower pot from the gate."
    for text in (household_fact(1), secret):
        assert send(small_engine.url, turn_event(text, ALICE, scope="household")).status_code == 202
    revision = small_engine.state.head("pippa")
    choose = blocks.choose_selection

    def choose_then_forget(*args: Any, **kwargs: Any) -> Any:
        chosen = choose(*args, **kwargs)
        held = {candidate.text: item for item, candidate in chosen[1]}
        small_engine.state.forget("pippa", held[secret], viewer=None)  # another request's forget
        return chosen

    monkeypatch.setattr(blocks, "choose_selection", choose_then_forget)
    answer = block(small_engine.url, revision)
    assert answer.status_code == 410, answer.text
    assert secret not in answer.text
    monkeypatch.setattr(blocks, "choose_selection", choose)
    assert secret not in head(small_engine.url)["block"]
