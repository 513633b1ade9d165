"""A block rendered for a member holds their private memories: the admin shows its text to that
member only, never to other staff (a superuser included); household-only blocks stay readable. The
same goes for the turn events sent from a member's conversation; a brain call's answer (which may
have been assembled from private items) is shown to nobody."""

import uuid
from typing import Any

import pytest

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import BrainCall, MemoryBlock, OutboxEvent
from tests.support.clients import page_as
from tests.support.plugin_world import pinned_to_a_members_block
from webui.models import Conversation

pytestmark = pytest.mark.django_db

PRIVATE_TEXT = "What I remember:\n- Alice is planning a surprise party for Bob."


@pytest.fixture
def alices_pinned_conversation(make_user: Any, make_conversation: Any) -> Conversation:
    alice = make_user("alice_member", is_staff=True, is_superuser=True)
    return pinned_to_a_members_block(make_conversation, alice, PRIVATE_TEXT)


def test_another_superuser_sees_that_a_members_block_is_withheld_not_its_text(
    alices_pinned_conversation: Conversation, make_user: Any
) -> None:
    root = page_as(make_user("root", is_staff=True, is_superuser=True))
    block = MemoryBlock.objects.get()

    block_page = root.get(f"/admin/pippa_memory/memoryblock/{block.pk}/change/")
    pin_page = root.get(
        f"/admin/pippa_memory/conversationpin/{alices_pinned_conversation.pk}/change/"
    )

    for page in (block_page, pin_page):
        assert page.status_code == 200
        assert "surprise party" not in page.content.decode()
        assert "holds their private memories" in page.content.decode()


def test_the_member_the_block_was_rendered_for_reads_it_in_the_admin(
    alices_pinned_conversation: Conversation,
) -> None:
    alice = page_as(alices_pinned_conversation.viewer)
    block = MemoryBlock.objects.get()

    block_page = alice.get(f"/admin/pippa_memory/memoryblock/{block.pk}/change/")
    pin_page = alice.get(
        f"/admin/pippa_memory/conversationpin/{alices_pinned_conversation.pk}/change/"
    )

    assert "surprise party" in block_page.content.decode()
    assert "surprise party" in pin_page.content.decode()


def test_a_household_only_block_stays_readable_for_staff(make_user: Any, soul: Any) -> None:
    text = "What I remember:\n- The bins go out on Tuesday."
    block = MemoryBlock.objects.create(
        soul=soul, revision="r1", viewer="", text=text, sha256=keyed_sha256(text)
    )
    root = page_as(make_user("root", is_staff=True, is_superuser=True))

    page = root.get(f"/admin/pippa_memory/memoryblock/{block.pk}/change/")

    assert "The bins go out on Tuesday." in page.content.decode()


def outbox_event_for(conversation: Conversation) -> OutboxEvent:
    viewer = conversation.viewer
    return OutboxEvent.objects.create(
        soul=conversation.soul,
        conversation_id=conversation.pk,
        message_id=uuid.uuid4(),
        payload={
            "type": "conversation.turn",
            "conversation": {
                "id": str(conversation.pk),
                "viewer": {"member": str(viewer.pk), "name": "Alice"} if viewer else None,
            },
            "message": {"content": "Keep the surprise party for Bob a secret."},
        },
    )


def test_an_outbox_events_payload_is_withheld_from_staff_who_are_not_its_viewer(
    alices_pinned_conversation: Conversation, make_user: Any
) -> None:
    event = outbox_event_for(alices_pinned_conversation)
    path = f"/admin/pippa_memory/outboxevent/{event.pk}/change/"
    root = page_as(make_user("root", is_staff=True, is_superuser=True))
    alice = page_as(alices_pinned_conversation.viewer)

    withheld = root.get(path).content.decode()
    shown = alice.get(path).content.decode()

    assert "surprise party" not in withheld
    assert "only they see" in withheld
    assert str(event.message_id) in withheld
    assert "surprise party" in shown


def test_an_unattended_runs_outbox_payload_stays_readable(
    make_conversation: Any, make_user: Any
) -> None:
    event = outbox_event_for(make_conversation(viewer=None, kind=Conversation.Kind.JOB))
    root = page_as(make_user("root", is_staff=True, is_superuser=True))

    page = root.get(f"/admin/pippa_memory/outboxevent/{event.pk}/change/").content.decode()

    assert "surprise party" in page


def test_a_brain_calls_answer_and_attempts_are_withheld_from_every_account(
    alices_pinned_conversation: Conversation, make_user: Any
) -> None:
    call = BrainCall.objects.create(
        request_id="req-private",
        outcome="answered",
        status_code=200,
        response_body='{"output": {"block": "Alice is planning a surprise party for Bob."}}',
        attempts=[
            {
                "vessel": "cloud",
                "model": "m-1",
                "outcome": "failed",
                "code": "timeout",
                "message": "Half an answer: the surprise party",
            },
            {"vessel": "local", "model": "m-2", "outcome": "answered", "usage": {}},
        ],
    )
    path = f"/admin/pippa_memory/braincall/{call.pk}/change/"

    for account in (
        make_user("root", is_staff=True, is_superuser=True),
        alices_pinned_conversation.viewer,
    ):
        page = page_as(account).get(path).content.decode()
        assert "surprise party" not in page
        assert "cloud / m-1: failed (timeout)" in page
        assert "local / m-2: answered" in page
