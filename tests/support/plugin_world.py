"""Records of the memory plug-in for its admin tests: one of each record the admin pages show
(the ``world`` fixture in ``tests/pippa_memory/conftest.py`` makes it), and a member's own block."""

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import BrainCall, MemoryBlock, OutboxEvent, PinRecord
from webui.models import Conversation, Soul


@dataclass
class PluginWorld:
    """One of each record the plug-in's admin pages show."""

    users: dict[str, Any]
    conversation: Conversation
    pin: PinRecord
    block: MemoryBlock
    event: OutboxEvent
    call: BrainCall
    memories: dict[str, str]
    leaver: Any


def outbox_event(soul: Soul, conversation: Conversation, **fields: Any) -> OutboxEvent:
    """A turn event of ``conversation``, pending for an hour unless ``fields`` say otherwise."""
    fields.setdefault("next_attempt_at", timezone.now() + timedelta(hours=1))
    return OutboxEvent.objects.create(
        soul=soul,
        conversation_id=conversation.pk,
        message_id=uuid.uuid4(),
        payload={"type": "conversation.turn"},
        **fields,
    )


def pinned_to_a_members_block(
    make_conversation: Any, member: Any, text: str, **fields: Any
) -> Conversation:
    """A conversation of ``member``, pinned a minute ago at revision r3, whose block (holding
    ``text``) was rendered for ``member`` alone."""
    conversation = make_conversation(
        viewer=member, pinned_head="r3", pinned_at=timezone.now() - timedelta(minutes=1), **fields
    )
    MemoryBlock.objects.create(
        soul=conversation.soul,
        revision="r3",
        viewer=str(member.pk),
        text=text,
        sha256=keyed_sha256(text),
        items=["m1"],
    )
    return conversation
