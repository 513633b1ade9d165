"""A change to a memory whose answer the engine never gave (treated as done for privacy), and the
places a member could still meet the memory afterwards."""

import json
from typing import Any

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, memory_page
from tests.support.memory_turns import next_prompt

#: What a member said that a change must take out of every later copy.
SECRET = "The spare key is under the blue pot."

#: The methods of a change (the item's lookup, a GET on the same path, answers as usual).
CHANGES = ["DELETE", "PATCH", "POST"]
#: The engine applies the change and its answer is lost; or it fails before applying it.
LOST = {"lost_after_applying": ("reset", {}), "failed_before": ("error", {"status": 503})}


def lose_the_answer(engine: ReferenceEngine, case: str, path: str) -> None:
    """The next change on ``path`` loses its answer as ``case`` (a key of :data:`LOST`) says."""
    mode, options = LOST[case]
    engine.set_fault(mode, paths=[path], methods=CHANGES, times=1, **options)


def forget_losing_the_answer(
    engine: ReferenceEngine, user: Any, item: str, case: str = "lost_after_applying"
) -> None:
    """``user`` forgets ``item`` through the API and the engine's answer is lost (``case``): the
    API says it is treated as done (202)."""
    lose_the_answer(engine, case, f"/v1/souls/pippa/items/{item}")
    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")
    assert response.status_code == 202, response.content


def api_listing(user: Any) -> str:
    """The memory API's listing for ``user``, as text."""
    response = api_as(user).get("/api/memory/items/", {"soul": "pippa"})
    assert response.status_code == 200, response.content
    return json.dumps(response.json())


def assert_nowhere_for(
    user: Any, text: str, chat: Any, sent: list[dict[str, Any]], make_conversation: Any
) -> None:
    """``text`` is in nothing ``user`` meets next: the next turn of ``chat``, a recall there, a new
    chat's first turn, the API's listing, the memory page."""
    assert text not in next_prompt(chat, sent, "again")
    assert text not in next_prompt(chat, sent, "recall blue pot")
    assert text not in next_prompt(make_conversation(viewer=user), sent, "hi")
    assert text not in api_listing(user)
    assert text not in memory_page(user, soul="pippa")


def said_then_forgotten(engine: ReferenceEngine, user: Any, case: str) -> str:
    """:data:`SECRET`, said by ``user``, then forgotten through the API with the engine's answer
    lost (``case``); its id."""
    item = add_memory(engine, SECRET, by=user)
    forget_losing_the_answer(engine, user, item, case)
    return item
