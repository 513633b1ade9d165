"""Nothing private outlives its reason: a stored memory block that no conversation pins is pruned
after ``PIPPA_MEMORY_PRUNE_BLOCKS_DAYS`` (on SQLite and PostgreSQL alike: the match of a block's
viewer to a conversation's member is made in SQL), and deleting a member deletes the blocks
rendered for them and turns the tombstones that spared them into plain forgets."""

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import ItemTombstone, MemoryBlock
from webui.models import Conversation

pytestmark = pytest.mark.django_db


def days_ago(days: float) -> Any:
    return timezone.now() - timedelta(days=days)


def block(soul: Any, revision: str, viewer: Any, *, age: float) -> MemoryBlock:
    text = f"What I remember at {revision}."
    stored = MemoryBlock.objects.create(
        soul=soul, revision=revision, viewer=str(viewer.pk) if viewer else "", text=text,
        sha256=keyed_sha256(text), items=["m1"],
    )  # fmt: skip
    MemoryBlock.objects.filter(pk=stored.pk).update(fetched_at=days_ago(age))
    return stored


def pin(conversation: Conversation, revision: str) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(
        pinned_head=revision, pinned_at=timezone.now()
    )


def test_blocks_no_conversation_pins_go_after_their_window_and_pinned_ones_stay(
    memory_settings: Any, soul: Any, user: Any, bob: Any, make_conversation: Any
) -> None:
    pinned = block(soul, "r1", user, age=40)
    pin(make_conversation(viewer=user), "r1")
    # Only Alice's chats pin r1: Bob's rendering of r1 is no one's.
    unpinned_same_revision = block(soul, "r1", bob, age=40)
    household = block(soul, "r2", None, age=40)
    pin(make_conversation(viewer=None, kind="wake"), "r2")
    old_unpinned = block(soul, "r0", user, age=40)
    fresh_unpinned = block(soul, "r3", user, age=1)
    out = StringIO()

    call_command("prune", "--no-progress", stdout=out)

    assert set(MemoryBlock.objects.values_list("pk", flat=True)) == {
        pinned.pk,
        household.pk,
        fresh_unpinned.pk,
    }
    assert not MemoryBlock.objects.filter(pk__in=[old_unpinned.pk, unpinned_same_revision.pk])
    assert "memory blocks no conversation pins (stored more than 7 days ago)" in out.getvalue()


def test_the_block_window_is_a_setting_and_zero_keeps_them(
    memory_settings: Any, configure: Any, soul: Any, user: Any
) -> None:
    block(soul, "r0", user, age=400)
    configure(PRUNE_BLOCKS_DAYS=0)

    out = StringIO()
    call_command("prune", "--no-progress", stdout=out)

    assert MemoryBlock.objects.count() == 1
    assert "PIPPA_MEMORY_PRUNE_BLOCKS_DAYS=0" in out.getvalue()


def test_deleting_a_member_deletes_their_blocks_and_the_tombstones_kept_for_them(
    soul: Any, user: Any, bob: Any
) -> None:
    bobs = block(soul, "r1", bob, age=0)
    alices = block(soul, "r1", user, age=0)
    household = block(soul, "r1", None, age=0)
    ItemTombstone.objects.create(soul=soul, item_id="m-made-private", spared_viewer=str(bob.pk))
    ItemTombstone.objects.create(soul=soul, item_id="m-forgotten")

    bob.delete()

    assert set(MemoryBlock.objects.values_list("pk", flat=True)) == {alices.pk, household.pk}
    assert not MemoryBlock.objects.filter(pk=bobs.pk).exists()
    assert sorted(ItemTombstone.objects.values_list("item_id", "spared_viewer")) == [
        ("m-forgotten", ""),
        ("m-made-private", ""),
    ]
