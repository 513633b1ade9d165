"""The history a prompt replays is read once per process and then only the rows added since, and
it is the same bytes as a fresh read from model instances, for every adapter, over a long
conversation with tool rounds."""

from typing import Any

import pytest

from webui.models import Conversation, Message
from webui.prompt.types import HistoryMessage, Prompt
from webui.text.canonical import canonical_bytes
from webui.turns import history
from webui.turns.service import run_turn
from webui.vessels.registry import ADAPTERS

pytestmark = pytest.mark.django_db


def from_instances(conversation: Conversation, before: Message) -> tuple[HistoryMessage, ...]:
    """The history as it was built before it was kept: a model instance per row."""
    rows = Message.objects.filter(conversation=conversation, sequence__lt=before.sequence)
    return tuple(
        history.history_message(
            id=m.id, role=m.role, content=m.content, tool_uses=m.tool_uses, rounds=m.rounds
        )
        for m in rows.order_by("sequence")
    )


def request_bytes(conversation: Conversation, messages: tuple[HistoryMessage, ...]) -> list[bytes]:
    """What every adapter would send with this history (the rest of the prompt held fixed)."""
    prompt = Prompt(
        conversation_id=str(conversation.id),
        system_sections=("vault",),
        history=messages,
        user_text="next",
        turn_slot=("slot",),
        user_message_id="u",
    )
    return [
        canonical_bytes(adapter(conversation.vessel).build_request(prompt=prompt, tools=()))
        for adapter in ADAPTERS
    ]


def long_conversation(conversation: Conversation) -> list[Message]:
    """120 turns, every third with a tool round, a row written without its rounds (as the admin
    writes one), and a stopped reply; the user messages in order."""
    for index in range(120):
        text = f"remember fact {index}" if index % 3 == 0 else f"turn {index}: how is the garden?"
        run_turn(conversation=conversation, text=text)
    Message.objects.create(conversation=conversation, role="user", content="by hand")
    Message.objects.create(
        conversation=conversation,
        role="assistant",
        content="written by hand",
        tool_uses=[{"id": "h1", "name": "memory", "input": {"verb": "recall"}, "output": [1]}],
    )
    Message.objects.create(conversation=conversation, role="user", content="stop that")
    Message.objects.create(
        conversation=conversation, role="assistant", content="I was say", stopped=True
    )
    Message.objects.create(conversation=conversation, role="user", content="last")
    return list(conversation.messages.filter(role="user").order_by("sequence"))


def test_kept_history_is_the_same_bytes_as_a_fresh_read_over_a_long_conversation(
    conversation: Conversation, recording_tool: Any
) -> None:
    users = long_conversation(conversation)
    assert Message.objects.filter(conversation=conversation).exclude(rounds=[]).count() == 40

    history.forget(conversation.id)
    for user_message in users:  # turn by turn, as one process answers them
        kept = history.conversation_history(conversation, before=user_message)
        fresh = from_instances(conversation, user_message)
        assert kept == fresh
        assert request_bytes(conversation, kept) == request_bytes(conversation, fresh)

    # A retry of an earlier message, answered by a process that kept the whole conversation.
    earlier = users[40]
    assert history.conversation_history(conversation, before=earlier) == from_instances(
        conversation, earlier
    )


def test_a_later_turn_reads_only_the_rows_added_since(
    conversation: Conversation, recording_tool: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for index in range(30):
        run_turn(conversation=conversation, text=f"turn {index}")
    newest = Message.objects.create(conversation=conversation, role="user", content="now")

    with CaptureQueriesContext(connection) as queries:
        kept = history.conversation_history(conversation, before=newest)

    # The last turn read up to its own user message (59); only 59 and its answer are new.
    (query,) = queries.captured_queries
    assert '"sequence" > 58 AND' in query["sql"]
    assert '"sequence" < 61)' in query["sql"]
    assert len(kept) == 60


def test_a_row_saved_again_or_deleted_through_the_model_is_read_afresh(
    conversation: Conversation, recording_tool: Any
) -> None:
    for index in range(3):
        run_turn(conversation=conversation, text=f"turn {index}")
    newest = Message.objects.create(conversation=conversation, role="user", content="now")
    history.conversation_history(conversation, before=newest)

    reply = conversation.messages.filter(role="assistant").first()
    reply.content = "corrected"
    reply.save()
    assert history.conversation_history(conversation, before=newest)[1].text == "corrected"

    conversation.messages.filter(role="user").first().delete()
    kept = history.conversation_history(conversation, before=newest)
    assert kept == from_instances(conversation, newest)
    assert len(kept) == 5
