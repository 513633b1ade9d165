"""A block kept warm in the process's rendered-block cache is checked against tombstones exactly as
a stored one is: when it holds an item forgotten since (here a forget the engine applied whose
answer never came back, and whose re-pin of this conversation never happened, so the tombstone
is all that is left), the next chat turn re-pins the conversation to the head (``forgotten``) and
its prompt does not carry the item, whether the block was warm in this process or read from its
row by a cold one. Whole turns on the offline vessel, against the reference engine over a
socket."""

import json
from typing import Any

import pytest
import requests

from pippa_memory.pins import records, turn_block
from pippa_memory.pins.tombstones import record_tombstones
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import HEADERS, add_memory, head
from webui.models import Conversation, VesselCall
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

SECRET = "The spare key is under the blue pot."
KEPT = "The bins go out on Tuesday."


def forgotten_behind_the_pins_back(
    engine: ReferenceEngine, conversation: Conversation, item: str
) -> None:
    """The item's tombstone, and the engine's forget of it, with no re-pin requested: what a
    forget leaves when its answer was lost and its scan of stored blocks missed this one."""
    record_tombstones(soul=conversation.soul, item_ids={item})
    gone = requests.delete(f"{engine.url}/v1/souls/pippa/items/{item}", headers=HEADERS, timeout=5)
    assert gone.status_code == 200, gone.text


@pytest.mark.parametrize("process", ["warm", "cold"])
def test_a_block_holding_a_tombstoned_item_is_repinned_whether_cached_or_stored(
    memory_on: ReferenceEngine, user: Any, make_conversation: Any, sent_requests: list[Any],
    process: str,
) -> None:  # fmt: skip
    add_memory(memory_on, KEPT, by=user)
    item = add_memory(memory_on, SECRET, by=user)
    talk = make_conversation(viewer=user)
    run_turn(conversation=talk, text="hello")
    talk.refresh_from_db()
    pinned_before = talk.pinned_head
    assert SECRET in sent_requests[-1]["system"]
    assert turn_block.RENDERED.get(turn_block.rendered_key(talk)) is not None
    forgotten_behind_the_pins_back(memory_on, talk, item)
    if process == "cold":
        turn_block.RENDERED.clear()  # a process that never rendered it reads the stored row

    run_turn(conversation=Conversation.objects.get(pk=talk.pk), text="again")

    talk.refresh_from_db()
    assert SECRET not in json.dumps(sent_requests[-1])
    assert KEPT in sent_requests[-1]["system"]
    assert talk.pinned_head not in (None, pinned_before)
    assert talk.pinned_head == head(memory_on, viewer=user)["revision"]
    assert talk.pin_records.order_by("-id").first().reason == records.FORGOTTEN
    latest = VesselCall.objects.filter(conversation=talk).order_by("-id").first()
    assert (latest.drift_section, latest.drift_cause) == ("memory", records.FORGOTTEN)
