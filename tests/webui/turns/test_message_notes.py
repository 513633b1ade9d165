"""The host's two points for what rode a reply: ``turn_saving`` writes an extension's own rows in
the reply's transaction, and ``message_notes`` puts notes under messages wherever the member is
shown them (the page, the messages API, a turn's answer), never into the messages themselves."""

import json
from collections.abc import Sequence
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from webui.extensions import MessageNote, TurnContext, TurnExtension
from webui.models import Conversation, Message, Soul
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


class NotingExtension(TurnExtension):
    """Notes every reply with its own sequence number."""

    name = "noting"

    def message_notes(
        self, *, conversation: Conversation, messages: Sequence[Message]
    ) -> dict[str, list[MessageNote]]:
        return {
            str(m.pk): [MessageNote(kind="test", text=f"note on reply {m.sequence}")]
            for m in messages
            if m.role == Message.Role.ASSISTANT
        }


class BrokenNotes(TurnExtension):
    name = "broken-notes"

    def message_notes(self, **kwargs: Any) -> dict[str, list[MessageNote]]:
        raise RuntimeError("notes are broken")


def send(client: APIClient, conversation: Conversation, text: str) -> Any:
    return client.post(
        f"/api/conversations/{conversation.pk}/messages/", {"text": text}, format="json"
    )


def test_a_message_no_extension_notes_has_an_empty_list_of_notes(
    auth_client: APIClient, conversation: Conversation
) -> None:
    body = send(auth_client, conversation, "hello").json()
    listed = auth_client.get(f"/api/conversations/{conversation.pk}/messages/").json()

    assert body["user"]["notes"] == []
    assert body["assistant"]["notes"] == []
    assert [m["notes"] for m in listed] == [[], []]


def test_notes_come_under_their_message_in_the_answer_the_list_and_the_page(
    auth_client: APIClient, conversation: Conversation, user: Any, extension: Any
) -> None:
    extension(NotingExtension())

    body = send(auth_client, conversation, "hello").json()
    listed = auth_client.get(f"/api/conversations/{conversation.pk}/messages/").json()
    page = Client()
    page.force_login(user)
    html = page.get(f"/conversations/{conversation.pk}/").content.decode()
    history = json.loads(
        html.split('<script id="history" type="application/json">')[1].split("<")[0]
    )

    note = [{"kind": "test", "text": "note on reply 2"}]
    assert body["assistant"]["notes"] == note
    assert body["user"]["notes"] == []
    assert [m["notes"] for m in listed] == [[], note]
    assert [m["notes"] for m in history] == [[], note]
    # A note is never part of the message.
    assert "note on reply" not in json.dumps(list(Message.objects.values()), default=str)


def test_a_failing_extension_adds_no_notes_and_the_messages_still_come(
    auth_client: APIClient, conversation: Conversation, extension: Any
) -> None:
    extension(BrokenNotes())
    extension(NotingExtension())

    body = send(auth_client, conversation, "hello")

    assert body.status_code == 201
    assert body.json()["assistant"]["notes"] == [{"kind": "test", "text": "note on reply 2"}]


class RecordingExtension(TurnExtension):
    """Writes a row about the reply while it is saved, and says what it saw then."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[tuple[bool, bool]] = []

    def turn_saving(self, *, turn: TurnContext, assistant_message: Message) -> None:
        self.seen.append(
            (connection.in_atomic_block, Message.objects.filter(pk=assistant_message.pk).exists())
        )
        Soul.objects.create(slug=f"saw-{assistant_message.sequence}", name="x", vault_path="x")


class FailingSaving(TurnExtension):
    name = "failing-saving"

    def turn_saving(self, *, turn: TurnContext, assistant_message: Message) -> None:
        Soul.objects.create(slug="half-written", name="x", vault_path="x")
        raise RuntimeError("cannot record")


def test_turn_saving_writes_in_the_replys_own_transaction(
    conversation: Conversation, extension: Any
) -> None:
    recording = extension(RecordingExtension())

    result = run_turn(conversation=conversation, text="hello")

    assert recording.seen == [(True, True)]
    assert Soul.objects.filter(slug=f"saw-{result.assistant_message.sequence}").exists()


def test_a_failing_turn_saving_is_undone_and_the_reply_is_saved_anyway(
    conversation: Conversation, extension: Any
) -> None:
    extension(FailingSaving())
    recording = extension(RecordingExtension())

    result = run_turn(conversation=conversation, text="hello")

    assert Message.objects.filter(pk=result.assistant_message.pk).exists()
    assert not Soul.objects.filter(slug="half-written").exists()
    assert recording.seen == [(True, True)]
