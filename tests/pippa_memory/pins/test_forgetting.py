"""Forgetting reaches live conversations: after a forget the engine confirmed, exactly the chats
whose pinned block holds the item re-pin at their next turn (``forgotten`` in their pin history,
one prompt-cache miss); the others keep their pin and their bytes; stored blocks that held it and
that nobody pins are deleted. Against the reference engine over a socket."""

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import MemoryBlock, PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, grant_manage_memory, head
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def pinned(conversation: Conversation, *, revision: str, items: list[str]) -> MemoryBlock:
    """Pin ``conversation`` to a stored block of ``revision`` for its viewer holding ``items``."""
    viewer = str(conversation.viewer.pk) if conversation.viewer else ""
    text = f"What I remember at {revision} for {viewer or 'nobody'}."
    block, _ = MemoryBlock.objects.get_or_create(
        soul=conversation.soul,
        revision=revision,
        viewer=viewer,
        defaults={"text": text, "sha256": keyed_sha256(text), "items": items},
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        pinned_head=revision, pinned_at=timezone.now()
    )
    conversation.refresh_from_db()
    return block


def pin_state(conversation: Conversation) -> tuple[Any, ...]:
    conversation.refresh_from_db()
    return conversation.pinned_head, conversation.pinned_at, conversation.pin_records.count()


def forget(client: APIClient, item: str) -> Any:
    response = client.delete(f"/api/memory/items/{item}/?soul=pippa")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_forget_repins_exactly_the_chats_whose_block_held_it_and_deletes_unpinned_blocks(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any
) -> None:
    forgotten = add_memory(memory_on, "The spare key is under the blue pot.", by=user)
    kept = add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    holds = make_conversation(viewer=user)
    other = make_conversation(viewer=user)
    bobs = make_conversation(viewer=bob)
    held_block = pinned(holds, revision="r2", items=[kept, forgotten])
    other_block = pinned(other, revision="r1", items=[kept])
    bobs_block = pinned(bobs, revision="r2", items=[kept, forgotten])
    stale = MemoryBlock.objects.create(
        soul=holds.soul, revision="r0", viewer=str(user.pk), text="-", sha256="0" * 64,
        items=[forgotten],
    )  # fmt: skip
    other_before = pin_state(other)

    answer = forget(api_as(user), forgotten)

    assert answer["repinned"] == 2
    for conversation in (holds, bobs):
        conversation.refresh_from_db()
        assert (conversation.pinned_head, conversation.pinned_at) == (None, None)
        record = conversation.pin_records.get()
        assert (record.outcome, record.reason, record.revision) == (
            "repin_requested",
            "forgotten",
            "r2",
        )
        assert record.requested_by == user
    assert pin_state(other) == other_before
    remaining = set(MemoryBlock.objects.values_list("pk", flat=True))
    assert remaining == {other_block.pk}
    assert not {held_block.pk, bobs_block.pk, stale.pk} & remaining


def test_after_a_forget_the_next_turn_carries_no_trace_and_other_chats_keep_their_bytes(
    memory_on: ReferenceEngine, user: Any, make_conversation: Any, sent_requests: list[Any],
    fixed_clock: Any,
) -> None:  # fmt: skip
    add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    untouched = make_conversation(viewer=user)
    run_turn(conversation=untouched, text="hello")
    forgotten = add_memory(memory_on, "The spare key is under the blue pot.", by=user)
    holds = make_conversation(viewer=user)
    run_turn(conversation=holds, text="hello")
    # Until the chat side stores each block's viewer and item ids, write them as it will.
    for conversation in (untouched, holds):
        conversation.refresh_from_db()
        MemoryBlock.objects.filter(revision=conversation.pinned_head).update(
            viewer=str(user.pk), items=head_items(memory_on, conversation.pinned_head, user)
        )
    assert "blue pot" in sent_requests[-1]["system"]
    untouched_system = sent_requests[0]["system"]

    forget(api_as(user), forgotten)
    holds.refresh_from_db()  # as the next request loads it
    run_turn(conversation=holds, text="again")
    after_forget = sent_requests[-1]
    untouched.refresh_from_db()
    run_turn(conversation=untouched, text="again")

    assert "blue pot" not in after_forget["system"]
    assert forgotten not in head(memory_on, viewer=user)["items"]
    holds.refresh_from_db()
    assert holds.pinned_head == head(memory_on, viewer=user)["revision"]
    reasons = list(holds.pin_records.order_by("created_at", "id").values_list("outcome", "reason"))
    assert reasons[1] == ("repin_requested", "forgotten")
    assert reasons[-1][0] == "pinned"
    assert sent_requests[-1]["system"] == untouched_system


def head_items(engine: ReferenceEngine, revision: str, viewer: Any) -> list[str]:
    import requests

    from tests.support.household_memory import HEADERS

    answer = requests.get(
        f"{engine.url}/v1/souls/pippa/blocks/{revision}",
        params={"viewer": str(viewer.pk)},
        headers=HEADERS,
        timeout=5,
    )
    return answer.json()["items"]


def test_making_an_item_private_repins_only_other_members_chats_that_held_it(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any
) -> None:
    item = add_memory(memory_on, "Alice's birthday is in May.", by=user)
    alices = make_conversation(viewer=user)
    bobs = make_conversation(viewer=bob)
    pinned(alices, revision="r1", items=[item])
    pinned(bobs, revision="r1", items=[item])
    alices_before = pin_state(alices)

    response = api_as(user).patch(
        f"/api/memory/items/{item}/?soul=pippa", {"scope": "private"}, format="json"
    )

    assert response.json()["repinned"] == 1
    assert pin_state(alices) == alices_before
    bobs.refresh_from_db()
    assert bobs.pinned_head is None
    assert bobs.pin_records.get().reason == "made_private"
    assert list(MemoryBlock.objects.values_list("viewer", flat=True)) == [str(user.pk)]


def test_forgetting_a_member_repins_every_chat_whose_block_held_anything_they_said(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_user: Any, make_conversation: Any
) -> None:
    private = add_memory(memory_on, "Bob's secret.", scope="private", by=bob)
    shared = add_memory(memory_on, "Bob feeds the cat.", by=bob)
    alices_own = add_memory(memory_on, "Alice waters the plants.", by=user)
    bobs = make_conversation(viewer=bob)
    alices = make_conversation(viewer=user)
    alices_other = make_conversation(viewer=user)
    pinned(bobs, revision="r3", items=[private, shared, alices_own])
    pinned(alices, revision="r3", items=[shared, alices_own])
    pinned(alices_other, revision="r9", items=[alices_own])
    untouched = pin_state(alices_other)
    manager = grant_manage_memory(make_user("carol", is_staff=True))

    response = api_as(manager).post(f"/api/memory/members/{bob.pk}/forget/?soul=pippa")

    assert response.json()["forgotten"] == 2
    assert response.json()["repinned"] == 2
    assert pin_state(alices_other) == untouched
    for conversation in (bobs, alices):
        assert conversation.pin_records.get().reason == "forgotten"


def test_a_forget_the_engine_refused_repins_nothing_and_keeps_every_block(
    memory_on: ReferenceEngine, user: Any, make_conversation: Any
) -> None:
    item = add_memory(memory_on, "The spare key is under the blue pot.", by=user)
    holds = make_conversation(viewer=user)
    pinned(holds, revision="r1", items=[item])
    before = pin_state(holds)
    memory_on.set_fault("error", status=400, paths=["/v1/souls/pippa/items/"], methods=["DELETE"])

    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "memory_unavailable"
    assert pin_state(holds) == before
    assert MemoryBlock.objects.count() == 1
    assert not PinRecord.objects.exists()
    assert item in head(memory_on, viewer=user)["items"]
