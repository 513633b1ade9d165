"""The offline vessel speaks, against the reference engine over real sockets: each sentence a
newcomer reads after ``remember``, ``recall`` and ``ask``, held word for word, including a recall
of what this conversation noted that is still on its way to memory."""

from typing import Any

import pytest

from pippa_memory.models import OutboxEvent
from reference_engine.server import ReferenceEngine
from tests.support.outbox_delivery import deliver_all
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def reply(conversation: Conversation, text: str) -> str:
    return run_turn(conversation=conversation, text=text).assistant_message.content


def test_remember_says_for_whom_it_is_kept(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    assert reply(conversation, "remember I like tea") == (
        "I'll remember that for you: “I like tea”."
    )
    assert reply(conversation, "remember for everyone the bins go out on Tuesday") == (
        "I'll remember that for everyone in the household: “the bins go out on Tuesday”."
    )


def test_recall_says_what_it_remembers_and_whose_it_is(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    reply(conversation, "remember I like tea")
    reply(conversation, "remember for everyone the tea caddy is blue")
    deliver_all()

    assert reply(conversation, "recall tea") == (
        "Here is what I remember about “tea”:\n"
        "- I like tea (you told me; just for you)\n"
        "- the tea caddy is blue (Alice told me; for the household)"
    )


def test_a_fallback_recall_reads_as_a_sentence(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")

    assert reply(conversation, "recall submarine") == (
        "Nothing matched “submarine”, so here are the most recent memories instead:\n"
        "- The spare key is under the blue pot. (for the household)"
    )


def test_a_recall_names_what_this_conversation_noted_that_is_on_its_way(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    reply(conversation, "remember I like green tea")
    assert OutboxEvent.objects.get().status == "pending"  # no worker: still on its way

    said = reply(conversation, "recall tea")

    assert said == (
        "I noted “I like green tea” a moment ago; it is on its way to memory.\n"
        "Nothing else about “tea” is in memory yet."
    )


def test_once_delivered_it_is_recalled_from_memory_not_named_as_on_its_way(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    reply(conversation, "remember I like green tea")
    deliver_all()

    said = reply(conversation, "recall tea")

    assert said == (
        "Here is what I remember about “tea”:\n- I like green tea (you told me; just for you)"
    )


def test_only_matching_remembers_of_this_conversation_are_named(
    memory_on: ReferenceEngine, conversation: Conversation, make_conversation: Any
) -> None:
    reply(conversation, "remember the spare key is in the shed")
    other = make_conversation()
    reply(other, "remember I like green tea")

    said = reply(conversation, "recall tea")

    assert "on its way" not in said
    assert said == "Nothing matched “tea”, and I don't remember anything yet."


def test_with_the_engine_down_a_recall_still_names_what_is_on_its_way(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    reply(conversation, "remember I like green tea")
    memory_on.set_fault("down")

    assert reply(conversation, "recall green tea") == (
        "I noted “I like green tea” a moment ago; it is on its way to memory.\n"
        "My memory can't be reached right now, so I can't recall that."
    )


def test_ask_says_the_answer_will_come_and_a_later_reply_says_it(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")

    assert reply(conversation, "ask where is the spare key") == (
        "I've asked my memory; the answer will come later."
    )
    assert reply(conversation, "hello") == (
        "(offline) I heard: “hello”\n"
        "About your earlier question “where is the spare key”: Pippa could not work that out: "
        "no brain door is configured. The memories that match the question: "
        "The spare key is under the blue pot."
    )
    assert reply(conversation, "hello again") == "(offline) I heard: “hello again”"


@pytest.mark.parametrize(
    ("memories", "answer"),
    [
        (
            ["The spare key is under the blue pot."],
            "Pippa could not work that out: no brain door is configured. "
            "Nothing she remembers matched the question.",
        ),
        ([], "nothing is remembered about that yet."),
    ],
)
def test_an_answer_that_found_no_match_says_so_when_it_rides(
    memory_on: ReferenceEngine, conversation: Conversation, memories: list[str], answer: str
) -> None:
    for text in memories:
        memory_on.state.remember("pippa", text)
    reply(conversation, "ask when is the submarine due")

    assert reply(conversation, "hello") == (
        f"(offline) I heard: “hello”\nAbout your earlier question “when is the submarine due”: {answer}"
    )
