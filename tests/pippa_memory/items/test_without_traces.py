"""What the plug-in shows of an item leaves no trace of a memory tombstoned here: what it
replaced (with its words) is left out, and a decision's reason, which may quote the memory it was
judged with, is shown only beside the memory it replaced or that replaced it; a member's own
correction or restore, worded by the engine, is shown as it is."""

from typing import Any

import pytest

from pippa_memory.items.services import REASON_WITHHELD, shown_here
from pippa_memory.pins.tombstones import record_tombstones
from webui.models import Soul

pytestmark = pytest.mark.django_db

QUOTING = "The newer 'spare key under the blue pot' says the same as the older."


def decided(outcome: str, reason: str = QUOTING) -> dict[str, Any]:
    return {
        "choice": None,
        "confidence": 0.9,
        "reason": reason,
        "brain_call": None,
        "judged_by": "vessel brain",
        "outcome": outcome,
        "at": "2026-12-05T10:00:00Z",
    }


def item(item_id: str, **truth: Any) -> dict[str, Any]:
    return {"id": item_id, "text": f"memory {item_id}", "supersedes": None, "superseded_by": None,
            "decision": None, **truth}  # fmt: skip


def test_a_tombstoned_memory_leaves_no_words_and_no_quoting_reason(soul: Soul) -> None:
    record_tombstones(soul=soul, item_ids={"gone"})
    old = {"id": "gone", "text": "spare key under the blue pot", "at": "2026-12-01"}
    items = [
        item("gone"),
        item("replacer", supersedes=old, decision=decided("replaced")),
        item("kept-beside", decision=decided("kept both")),
        item("replaced-by-gone", superseded_by={"id": "gone", "at": "x"}, decision=decided("replaced")),
        item("shown", supersedes={"id": "old", "text": "bins on Monday", "at": "x"},
             decision=decided("replaced", "The bins moved from Monday.")),
        item("corrected", decision=decided("corrected", "Corrected on the memory page.")),
    ]  # fmt: skip

    shown = {i["id"]: i for i in shown_here(soul=soul, viewer="8", items=items)}

    assert "gone" not in shown
    assert shown["replacer"]["supersedes"] is None
    assert "blue pot" not in repr(shown)
    assert shown["replacer"]["decision"]["reason"] == REASON_WITHHELD
    assert shown["kept-beside"]["decision"]["reason"] == REASON_WITHHELD  # names no memory
    assert shown["replaced-by-gone"]["superseded_by"] == {"id": "gone", "at": "x"}  # no words
    assert shown["replaced-by-gone"]["decision"]["reason"] == REASON_WITHHELD
    assert shown["shown"]["decision"]["reason"] == "The bins moved from Monday."  # beside it
    assert shown["corrected"]["decision"]["reason"] == "Corrected on the memory page."
    assert items[1]["supersedes"] == old  # the engine's answer itself is not changed
