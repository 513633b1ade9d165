"""A member's bad input is a 400, never a breaker trip (issue 35, point 4, the plug-in's side).

Each malformed input a member can reach (the memory page, the memory API, the memory tool's
recall and ask text, the conversation panel) is refused here with a clear error and no engine
call, ten times over, and another member's memory stays up: the breaker (three failures open it)
never opened. An engine that answers a 4xx (bad input it found itself) never trips it either.
Against the reference engine over a socket.
"""

from typing import Any

import pytest

from pippa_memory.engine.client import BREAKER, call_engine
from pippa_memory.extension import MemoryExtension
from pippa_memory.items.cursors import handed_out
from pippa_memory.items.services import fetch_items_page
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory
from webui.extensions import TurnContext
from webui.models import Message
from webui.prompt_types import ToolCall

pytestmark = pytest.mark.django_db

TEA = "Bob takes his tea with honey."
TIMES = 10
#: A cursor the engine never gave: past SQLite's integer range, once made the engine fail.
OVERFLOW = "before-99999999999999999999999"


def api_inputs() -> list[tuple[str, dict[str, str]]]:
    """Listing queries a member can send that must not reach the engine as they are."""
    stolen = handed_out("before-1", soul="pippa", viewer="999")  # another member's cursor
    return [
        ("overflowing cursor", {"soul": "pippa", "cursor": OVERFLOW}),
        ("cursor with a control character", {"soul": "pippa", "cursor": "before-1\x01"}),
        ("another member's cursor", {"soul": "pippa", "cursor": stolen or ""}),
        ("search with a control character", {"soul": "pippa", "q": "tea\x01"}),
        ("search too long", {"soul": "pippa", "q": "t" * 201}),
    ]


def engine_calls(engine: ReferenceEngine) -> int:
    return len(engine.received)


@pytest.fixture
def bobs_tea(memory_on: ReferenceEngine, bob: Any) -> str:
    """Bob's memory, there before the bad input (and still his after it)."""
    return add_memory(memory_on, TEA, by=bob)


def test_each_malformed_listing_is_a_400_with_no_engine_call_and_bob_stays_up(
    memory_on: ReferenceEngine, user: Any, bob: Any, bobs_tea: str, soul: Any
) -> None:
    before = engine_calls(memory_on)

    for what, query in api_inputs():
        for _ in range(TIMES):
            api = api_as(user).get("/api/memory/items/", query)
            assert api.status_code == 400, (what, api.content)
            assert api.json()["error"]["message"], what
            page = api_as(user).get("/memory/", query)
            assert page.status_code == 400, (what, page.status_code)
            assert b"memory-search-problem" in page.content, what

    assert engine_calls(memory_on) == before  # none of it reached the engine
    listing = api_as(bob).get("/api/memory/items/", {"soul": "pippa"})
    assert listing.status_code == 200
    assert TEA in listing.content.decode()


def test_a_cursor_handed_out_is_taken_back_and_pages_on(
    memory_on: ReferenceEngine, user: Any, soul: Any
) -> None:
    """The test above cannot pass by refusing every cursor: the one a listing gives works."""
    for number in range(3):
        add_memory(memory_on, f"Alice's memory number {number}.", by=user)

    page = fetch_items_page(soul=soul, user=user, limit=1)  # pages of one: a next is given
    following = api_as(user).get("/api/memory/items/", {"soul": "pippa", "cursor": page.next})

    assert page.next is not None
    assert not page.next.startswith("before-")  # the member never holds the engine's own
    assert following.status_code == 200, following.content
    assert following.json()["items"][0]["id"] != page.items[0].id


@pytest.mark.parametrize(
    ("verb", "text"),
    [
        ("recall", "tea\x00"),
        ("ask", "what tea\x00"),
        ("recall", "t" * 2001),
        ("ask", "w" * 2001),
    ],
)
def test_the_tools_bad_recall_and_ask_text_is_refused_with_no_engine_call(
    memory_on: ReferenceEngine,
    user: Any,
    bob: Any,
    bobs_tea: str,
    conversation: Any,
    verb: str,
    text: str,
) -> None:
    before = engine_calls(memory_on)
    said = Message.objects.create(conversation=conversation, role="user", content="hello")
    turn = TurnContext(conversation=conversation, user_message=said, first_turn=False)

    for _ in range(TIMES):
        handled, result = MemoryExtension().execute_tool(
            turn=turn, call=ToolCall(id="call-1", name="memory", input={"verb": verb, "text": text})
        )
        assert handled
        assert result["error"] == "invalid_input"
        assert result["message"]

    assert engine_calls(memory_on) == before
    listing = api_as(bob).get("/api/memory/items/", {"soul": "pippa"})
    assert listing.status_code == 200


def test_bad_conversation_panel_and_item_paths_are_refused_and_bob_stays_up(
    memory_on: ReferenceEngine, user: Any, bob: Any, bobs_tea: str, soul: Any
) -> None:
    client = api_as(user)
    long_id = "m" * 201

    for _ in range(TIMES):
        assert client.get("/api/memory/conversations/not-a-uuid/").status_code == 404
        assert client.post("/api/memory/conversations/not-a-uuid/refresh/").status_code == 404
        assert client.delete(f"/api/memory/items/{long_id}/?soul=pippa").status_code == 404
        assert client.delete("/api/memory/items/m%01x/?soul=pippa").status_code == 404

    assert not [r for r in memory_on.received if long_id in r["path"] or "\x01" in r["path"]]
    assert api_as(bob).get("/api/memory/items/", {"soul": "pippa"}).status_code == 200


def test_an_engine_answering_4xx_to_bad_input_never_trips_the_breaker(
    memory_on: ReferenceEngine, user: Any, bob: Any, bobs_tea: str, soul: Any
) -> None:
    memory_on.set_fault("error", status=400, paths=["/v1/recall"], times=TIMES)

    for _ in range(TIMES):
        outcome = call_engine("POST", "/v1/recall", body={"soul": "pippa"}, budget=2.0)
        assert outcome.status == 400

    assert BREAKER.get().current_state == "closed"
    assert api_as(bob).get("/api/memory/items/", {"soul": "pippa"}).status_code == 200
