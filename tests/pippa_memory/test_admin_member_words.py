"""A member's words and private memories stay theirs in the plug-in's admin too: staff holding
every view permission, and a superuser, read none of them on any admin page (pins, pin records,
stored blocks, outbox events, brain calls, and what a conversation's delete page lists), and no
lookup on the plug-in's free text answers anything but a plain 400."""

import uuid
from typing import Any

import pytest
from django.test import Client

from pippa_memory.models import (
    BrainCall,
    OutboxEvent,
    PendingAsk,
    PinRecord,
    UnattendedMemory,
)
from tests.support.access_walk import make_role_users
from tests.support.admin_member_words import (
    admin_pages,
    pages_quoting,
    refused_lookups_that_answered,
    searches_finding,
)
from tests.support.plugin_world import pinned_to_a_members_block
from webui.models import Conversation, Message

pytestmark = pytest.mark.django_db

TITLE = "Surprise party for Bob"
BLOCK = "What I remember:\n- Alice is planning a surprise party for Bob."
#: Compared ignoring case.
WORDS = ("surprise party", "the bakery", "guest list")


@pytest.fixture
def alices(make_user: Any, make_conversation: Any) -> Conversation:
    """A member's pinned conversation, and every plug-in row that holds what they said."""
    alice = make_user("alice_member")
    conversation = pinned_to_a_members_block(make_conversation, alice, BLOCK, title=TITLE)
    said = Message.objects.create(
        conversation=conversation, role="user", content="Who is on the guest list?"
    )
    PinRecord.objects.create(
        conversation=conversation, soul=conversation.soul, outcome="pinned", revision="r3"
    )
    # A conversation the admin may delete (no message goes with it): its delete page lists what
    # would go, its question to memory among it.
    asked = make_conversation(viewer=alice, title="Surprise party, the bakery")
    PendingAsk.objects.create(
        conversation=asked, ask_id="ask-1", question="Did Alice book the bakery?"
    )
    OutboxEvent.objects.create(
        soul=conversation.soul,
        conversation_id=conversation.pk,
        message_id=said.pk,
        payload={"message": {"content": "Who is on the guest list?"}},
    )
    BrainCall.objects.create(
        request_id="req-private",
        outcome="answered",
        status_code=200,
        response_body={"output": {"block": BLOCK}},
        attempts=[{"vessel": "cloud", "outcome": "failed", "message": "the surprise party"}],
    )
    return conversation


@pytest.fixture
def unattended_memory(make_conversation: Any) -> UnattendedMemory:
    run = make_conversation(viewer=None, kind=Conversation.Kind.JOB)
    return UnattendedMemory.objects.create(
        conversation=run, source="bundle", revision="r3", sha256="b" * 64, text="guest list: Bob"
    )


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_no_plugin_admin_page_shows_a_members_words_or_private_memory(
    alices: Conversation, make_user: Any, role: str
) -> None:
    client = client_for(make_role_users(make_user)[role])
    pages = [
        *admin_pages(with_delete=role == "superuser"),
        f"/admin/webui/conversation/{alices.pk}/delete/",
        "/cache/",
    ]

    assert pages_quoting(client, pages, WORDS) == []
    assert searches_finding(client, ["Surprise", "bakery", "guest"]) == []


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_every_lookup_on_the_plugins_free_text_is_a_plain_400(
    alices: Conversation, unattended_memory: UnattendedMemory, make_user: Any, role: str
) -> None:
    client = client_for(make_role_users(make_user)[role])

    wrong = refused_lookups_that_answered(client, "Surprise", WORDS)

    assert wrong == [], "\n".join(wrong)
    pins = "/admin/pippa_memory/conversationpin/"
    assert client.get(pins, {"title__startswith": "Surprise"}).status_code == 400
    assert client.get(f"/admin/pippa_memory/outboxevent/?id={uuid.uuid4()}").status_code == 200
