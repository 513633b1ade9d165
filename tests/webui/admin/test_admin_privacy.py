"""A member's conversation holds what they said and what memory answered them: the admin shows its
messages' text to that member only, never to other staff (a superuser included), while the
metadata stays visible; an unattended run's conversation (no viewer) stays readable. What decides
a conversation's history (its viewer above all) cannot be changed from the admin, nor can its
title (the member's words) be read or changed there."""

from typing import Any

import pytest
from django.contrib.auth.models import Permission

from tests.support.clients import client_as
from tests.support.member_words import PRIVATE_WORDS, RECALL_QUERY, recalled_turn
from webui.models import Conversation, Message

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user: Any) -> Any:
    """A member who is also staff, reading the admin with view permissions only."""
    member = make_user("alice_member", is_staff=True)
    member.user_permissions.set(
        Permission.objects.filter(codename__in=["view_conversation", "view_message"])
    )
    return member


@pytest.fixture
def alices_reply(alice: Any, make_conversation: Any) -> Message:
    _, reply = recalled_turn(make_conversation(viewer=alice))
    return reply


def admin_pages(reply: Message) -> dict[str, str]:
    conversation = reply.conversation
    return {
        "conversation": f"/admin/webui/conversation/{conversation.pk}/change/",
        "message": f"/admin/webui/message/{reply.pk}/change/",
    }


def test_a_superuser_sees_a_members_message_metadata_but_not_its_text(
    alices_reply: Message, make_user: Any
) -> None:
    root = client_as(make_user("root", is_staff=True, is_superuser=True))
    conversation = alices_reply.conversation
    said = conversation.messages.get(role="user")
    pages = {
        **admin_pages(alices_reply),
        "user message": f"/admin/webui/message/{said.pk}/change/",
        "message list": "/admin/webui/message/",
        "message search": "/admin/webui/message/?q=surprise",
        "conversation delete": f"/admin/webui/conversation/{conversation.pk}/delete/",
        "message history": f"/admin/webui/message/{alices_reply.pk}/history/",
    }

    for name, path in pages.items():
        page = root.get(path)
        text = page.content.decode()
        assert page.status_code == 200, name
        for words in PRIVATE_WORDS:
            assert words not in text, (name, words)

    for path in (pages["conversation"], pages["message"]):
        text = root.get(path).content.decode()
        assert "only they see" in text
        assert "memory (recall)" in text
        assert "assistant" in text.lower()


def test_the_member_made_staff_reads_their_own_messages_in_the_admin(
    alices_reply: Message, alice: Any
) -> None:
    own = client_as(alice)

    conversation_page = own.get(admin_pages(alices_reply)["conversation"]).content.decode()
    message_page = own.get(admin_pages(alices_reply)["message"]).content.decode()

    assert "surprise party" in conversation_page
    assert "booked the bakery" in conversation_page
    assert "booked the bakery" in message_page
    assert RECALL_QUERY in message_page
    assert "look up what you told me" in message_page


def test_an_unattended_runs_conversation_stays_readable_for_staff(
    make_conversation: Any, make_user: Any
) -> None:
    _, reply = recalled_turn(make_conversation(viewer=None, kind=Conversation.Kind.JOB))
    root = client_as(make_user("root", is_staff=True, is_superuser=True))

    conversation_page = root.get(admin_pages(reply)["conversation"]).content.decode()
    message_page = root.get(admin_pages(reply)["message"]).content.decode()

    assert "surprise party" in conversation_page
    assert "booked the bakery" in message_page


def test_a_change_post_cannot_rename_or_hand_over_a_members_conversation_or_its_messages(
    alices_reply: Message, make_user: Any
) -> None:
    conversation = alices_reply.conversation
    conversation.title = "Alice's own title"
    conversation.save()
    root_user = make_user("root", is_staff=True, is_superuser=True)
    messages = list(conversation.messages.order_by("sequence"))
    form = {
        "title": "Renamed by staff",
        "soul": conversation.soul_id,
        "vessel": conversation.vessel_id,
        "viewer": root_user.pk,
        "kind": Conversation.Kind.WAKE,
        "pinned_head": "r-forged",
        "vault_sha256": "f" * 64,
        "messages-TOTAL_FORMS": str(len(messages)),
        "messages-INITIAL_FORMS": str(len(messages)),
        "messages-MIN_NUM_FORMS": "0",
        "messages-MAX_NUM_FORMS": "1000",
    }
    for index, message in enumerate(messages):
        form |= {
            f"messages-{index}-id": str(message.pk),
            f"messages-{index}-conversation": str(conversation.pk),
            f"messages-{index}-role": message.role,
            f"messages-{index}-content": "Rewritten by staff.",
            f"messages-{index}-tool_uses": "[]",
            f"messages-{index}-usage": "{}",
        }

    response = client_as(root_user).post(
        f"/admin/webui/conversation/{conversation.pk}/change/", form
    )

    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.title == "Alice's own title"
    assert conversation.viewer_id != root_user.pk
    assert conversation.kind == Conversation.Kind.CHAT
    assert conversation.pinned_head is None
    assert conversation.vault_sha256 != "f" * 64
    assert [m.content for m in conversation.messages.order_by("sequence")] == [
        m.content for m in messages
    ]


def test_a_change_post_cannot_move_a_message_into_another_conversation(
    alices_reply: Message, make_user: Any, make_conversation: Any
) -> None:
    root_user = make_user("root", is_staff=True, is_superuser=True)
    roots_own = make_conversation(viewer=root_user)
    form = {
        "conversation": str(roots_own.pk),
        "role": "assistant",
        "usage": "{}",
        "vessel": "",
    }

    client_as(root_user).post(f"/admin/webui/message/{alices_reply.pk}/change/", form)

    alices_reply.refresh_from_db()
    assert alices_reply.conversation_id != roots_own.pk
