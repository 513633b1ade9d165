"""What rode a reply is shown under it, to the conversation's member only: the background answers
its per-turn slot carried (kept on the plug-in's own row with that reply, never in the
conversation), and the remembers a recall found still on their way to memory."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from pippa_memory.models import PendingAsk
from reference_engine.server import ReferenceEngine
from tests.support.outbox_delivery import deliver_all
from webui.models import Conversation, Message
from webui.text.canonical import canonical_json
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

KEY = "The spare key is under the blue pot."
# The engine in these tests has no brain door, so its answer says so and quotes what matched.
ANSWER = (
    "Pippa could not work that out: no brain door is configured. "
    f"The memories that match the question: {KEY}"
)
NOTE = f"Background answer to “where is the spare key”: {ANSWER}"


def send(client: APIClient, conversation: Conversation, text: str) -> dict[str, Any]:
    response = client.post(
        f"/api/conversations/{conversation.pk}/messages/", {"text": text}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def listed_notes(client: APIClient, conversation: Conversation) -> list[list[dict[str, str]]]:
    messages = client.get(f"/api/conversations/{conversation.pk}/messages/").json()
    return [m["notes"] for m in messages]


def test_a_background_answer_is_shown_under_the_reply_it_rode_and_no_other(
    memory_on: ReferenceEngine, conversation: Conversation, auth_client: APIClient
) -> None:
    memory_on.state.remember("pippa", KEY)

    asked = send(auth_client, conversation, "ask where is the spare key")
    rode = send(auth_client, conversation, "hello")
    after = send(auth_client, conversation, "hello again")

    note = {"kind": "background_answer", "text": NOTE}
    assert asked["assistant"]["notes"] == []
    assert rode["assistant"]["notes"] == [note]
    assert after["assistant"]["notes"] == []
    assert listed_notes(auth_client, conversation) == [[], [], [], [note], [], []]
    ask = PendingAsk.objects.get()
    assert str(ask.delivered_with_id) == rode["assistant"]["id"]
    assert ask.answer == ANSWER
    # The note is the plug-in's: no message, tool use or round of the conversation holds it.
    assert "Background answer" not in canonical_json(
        list(Message.objects.values("content", "tool_uses", "rounds"))
    )


def test_an_answer_whose_acknowledgement_failed_stays_under_the_one_reply_it_rode(
    memory_on: ReferenceEngine, conversation: Conversation, auth_client: APIClient
) -> None:
    memory_on.state.remember("pippa", KEY)
    send(auth_client, conversation, "ask where is the spare key")
    memory_on.set_fault(
        "error", status=503, paths=[f"/v1/conversations/{conversation.id}/answers/ack"]
    )
    first = send(auth_client, conversation, "first")  # rides; the acknowledgement fails
    memory_on.reset()
    second = send(auth_client, conversation, "second")  # never rides again; acknowledged

    assert "spare key" in first["assistant"]["content"]
    assert "spare key" not in second["assistant"]["content"]
    assert [n["text"] for n in first["assistant"]["notes"]] == [NOTE]
    assert second["assistant"]["notes"] == []
    acks = [r for r in memory_on.received if r["path"].endswith("/answers/ack")]
    assert len(acks) == 2


def test_a_recall_that_finds_a_remember_on_its_way_says_so_under_the_reply(
    memory_on: ReferenceEngine, conversation: Conversation, auth_client: APIClient
) -> None:
    send(auth_client, conversation, "remember I like green tea")

    recalled = send(auth_client, conversation, "recall tea")
    deliver_all()
    later = send(auth_client, conversation, "recall tea")

    assert recalled["assistant"]["notes"] == [
        {
            "kind": "on_its_way",
            "text": "On its way to memory when this was recalled: “I like green tea”",
        }
    ]
    assert recalled["assistant"]["tool_uses"][0]["output"]["pending"] == [
        {"text": "I like green tea", "scope": "private"}
    ]
    assert later["assistant"]["notes"] == []
    assert "pending" not in later["assistant"]["tool_uses"][0]["output"]


def test_another_member_sees_neither_the_conversation_nor_its_notes(
    memory_on: ReferenceEngine,
    conversation: Conversation,
    make_user: Any,
    make_conversation: Any,
) -> None:
    memory_on.state.remember("pippa", KEY)
    run_turn(conversation=conversation, text="ask where is the spare key")
    run_turn(conversation=conversation, text="hello")
    bob = APIClient()
    bob_user = make_user("bob")
    bob.force_login(bob_user)
    bobs = make_conversation(viewer=bob_user)
    run_turn(conversation=bobs, text="hello")

    assert bob.get(f"/api/conversations/{conversation.pk}/messages/").status_code == 404
    assert bob.get(f"/conversations/{conversation.pk}/").status_code == 404
    assert listed_notes(bob, bobs) == [[], []]
