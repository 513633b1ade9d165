"""The plug-in checks again what the engine enforces: an engine that sent another member's private
memory in a listing, a lookup or the listing of replaced memories would have it dropped here,
logged by id only, never its text."""

from typing import Any

import pytest

from pippa_memory.items import services
from reference_engine.server import ReferenceEngine

pytestmark = pytest.mark.django_db


def engine_item(item_id: str, text: str, *, scope: str, member: str | None) -> dict[str, Any]:
    """One item in the contract's shape."""
    said_by = {"member": member, "name": "Bob"} if member is not None else None
    return {
        "id": item_id,
        "text": text,
        "at": "2026-12-03T09:00:00Z",
        "scope": scope,
        "said_by": said_by,
        "source": {"conversation": None, "message": None, "tool_use": None},
        "keep": False,
        "supersedes": None,
        "superseded_by": None,
        "decision": None,
    }


def test_listing_and_finding_drop_an_item_the_viewer_may_not_see_even_if_the_engine_sends_it(
    memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any, caplog: Any
) -> None:
    secret = engine_item(
        "m-bob", "Bob is planning a surprise.", scope="private", member=str(bob.pk)
    )
    shared = engine_item("m-home", "The bins go out on Tuesday.", scope="household", member=None)
    leaky = {"items": [secret, shared], "next": None, "revision": "r9"}
    memory_on.set_fault("wrong_shape", paths=["/v1/souls/pippa/items"], body=leaky)
    page = services.fetch_items_page(soul=soul, user=user)
    orphans = services.fetch_orphaned(soul=soul, user=user)  # replaced=orphaned, the same path
    found = {"item": secret, "revision": "r9"}
    memory_on.set_fault("wrong_shape", paths=["/v1/souls/pippa/items/m-bob"], body=found)

    with pytest.raises(services.MemoryRefusal) as refusal:
        services.fetch_item(soul=soul, viewer=str(user.pk), item_id="m-bob")

    assert [item.id for item in page.items] == ["m-home"]
    assert [item.id for item in orphans] == ["m-home"]
    assert refusal.value.code == "not_found"
    assert "m-bob" in caplog.text
    assert "surprise" not in caplog.text
