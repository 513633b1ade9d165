"""The memory tool against the reference engine over real sockets: recall that says when it fell
back, asks whose answers ride exactly one later turn and are never stored, and the tool rendered
in every adapter's own format."""

import json
from typing import Any

import pytest
import responses

from pippa_memory.models import OutboxEvent, PendingAsk
from pippa_memory.turn.tool import MEMORY_TOOL
from provider_doubles import Kit
from reference_engine.server import ReferenceEngine
from webui.models import Conversation, Message
from webui.text.canonical import canonical_json
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def tool_output(conversation: Conversation, text: str) -> dict[str, Any]:
    return run_turn(conversation=conversation, text=text).assistant_message.tool_uses[0]["output"]


def test_recall_returns_exact_matches(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "Ada's birthday is 10 December.")
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")

    output = tool_output(conversation, "recall birthday")

    assert output["match"] == "words"
    assert [item["text"] for item in output["items"]] == ["Ada's birthday is 10 December."]
    assert [item["matched_by"] for item in output["items"]] == ["words"]
    assert "fallback" not in output
    (request,) = [r for r in memory_on.received if r["path"] == "/v1/recall"]
    assert request["body"]["query"] == "birthday"
    assert request["body"]["conversation"] == str(conversation.id)


def test_a_fallback_recall_says_so_in_words(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")

    result = run_turn(conversation=conversation, text="recall submarine")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output["match"] == "fallback"
    assert output["fallback"]["from"] == "memories matching 'submarine'"
    assert output["fallback"]["to"] == "the 1 most recent memories"
    assert "not matches but a fallback from memories matching 'submarine'" in output["note"]
    # The offline vessel reads the result and says so in a sentence.
    assert result.assistant_message.content == (
        "Nothing matched “submarine”, so here are the most recent memories instead:\n"
        "- The spare key is under the blue pot. (for the household)"
    )


@pytest.mark.parametrize(
    ("mode", "reason"), [("down", "connection_failed"), ("error", "http_error")]
)
def test_recall_with_the_engine_down_is_unavailable_and_the_turn_goes_on(
    memory_on: ReferenceEngine, conversation: Conversation, mode: str, reason: str
) -> None:
    memory_on.set_fault(mode, paths=["/v1/recall"])

    result = run_turn(conversation=conversation, text="recall tea")

    output = result.assistant_message.tool_uses[0]["output"]
    assert (output["error"], output["reason"]) == ("memory_unavailable", reason)
    assert result.assistant_message.content


def test_an_answer_rides_exactly_one_turn_and_is_never_written_into_the_conversation(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Grandma's recipe uses cardamom-7734.")

    asked = tool_output(conversation, "ask what spice is in the recipe")
    assert asked["status"] == "asked"
    assert "later turn" in asked["message"]
    assert PendingAsk.objects.get().ask_id == asked["ask_id"]

    thanks = run_turn(conversation=conversation, text="thanks").assistant_message
    run_turn(conversation=conversation, text="and now?")

    slots = [r["messages"][-1]["content"][1]["text"] for r in sent_requests[-2:]]
    assert "cardamom-7734" in slots[0]
    assert "Q: what spice is in the recipe" in slots[0]
    assert "cardamom-7734" not in slots[1]
    acks = [r for r in memory_on.received if r["path"].endswith("/answers/ack")]
    assert len(acks) == 1
    assert PendingAsk.objects.get().answered_at is not None
    # The slot is never stored: the answer is in the conversation only as the vessel's own words
    # in the reply it rode (the offline vessel says it), and on the plug-in's own row.
    assert thanks.content == (
        "(offline) I heard: “thanks”\n"
        "About your earlier question “what spice is in the recipe”: Pippa could not work that "
        "out: no brain door is configured. The memories that match the question: "
        "Grandma's recipe uses cardamom-7734."
    )
    stored = canonical_json(
        [
            list(Message.objects.exclude(pk=thanks.pk).values("content", "tool_uses", "rounds")),
            list(Message.objects.values("tool_uses", "rounds")),
            list(OutboxEvent.objects.exclude(message_id=thanks.pk).values_list("payload")),
            list(PendingAsk.objects.values_list("ask_id", "question")),
        ]
    )
    assert "cardamom-7734" not in stored
    assert "Your memory answered" not in canonical_json(list(Message.objects.values("content")))


def test_an_answer_whose_acknowledgement_failed_rides_once_and_is_acknowledged_again(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "The plumber's number is 0117-555.")
    tool_output(conversation, "ask what is the plumber's number")
    memory_on.set_fault("error", status=503, paths=["/v1/conversations/"], times=2)

    run_turn(conversation=conversation, text="first")  # fetch fails: no answer rides
    memory_on.set_fault(
        "error", status=503, paths=[f"/v1/conversations/{conversation.id}/answers/ack"]
    )
    run_turn(conversation=conversation, text="second")  # rides, but the ack fails
    memory_on.reset()
    run_turn(conversation=conversation, text="third")  # offered again: only acknowledged
    run_turn(conversation=conversation, text="fourth")  # gone

    rode = ["0117-555" in r["messages"][-1]["content"][1]["text"] for r in sent_requests[-4:]]
    assert rode == [False, True, False, False]
    acks = [r for r in memory_on.received if r["path"].endswith("/answers/ack")]
    assert len(acks) == 2
    assert PendingAsk.objects.get().answered_at is not None


def test_no_answers_are_fetched_when_no_question_is_out(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    for text in ["hello", "recall tea", "remember tea"]:
        run_turn(conversation=conversation, text=text)

    assert not [r for r in memory_on.received if "/answers" in r["path"]]


def test_an_answer_that_arrives_between_turns_rides_the_next_turn(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from pippa_memory.turn.answers import QUESTIONS_OUT

    now = [1000.0]
    memory_on.state.clock = lambda: now[0]
    memory_on.state.answer_delay = 30.0
    memory_on.state.remember("pippa", "The bins go out on Tuesday-4471.")
    tool_output(conversation, "ask when the bins go out")
    stored = Conversation.objects.get(pk=conversation.pk)  # as the next request loads it
    assert stored.extension_flags == [QUESTIONS_OUT]

    run_turn(conversation=stored, text="still thinking?")  # not ready yet: nothing rides
    now[0] += 60  # the engine answers while nobody is talking
    stored = Conversation.objects.get(pk=conversation.pk)
    assert stored.has_extension_flag(QUESTIONS_OUT)
    run_turn(conversation=stored, text="and now?")  # rides this turn

    stored = Conversation.objects.get(pk=conversation.pk)
    assert stored.extension_flags == []
    fetches = len([r for r in memory_on.received if r["path"].endswith("/answers")])
    with CaptureQueriesContext(connection) as queries:
        run_turn(conversation=stored, text="anything else?")  # no question out: no look

    slots = [r["messages"][-1]["content"] for r in sent_requests[-3:]]
    assert ["Tuesday-4471" in json.dumps(s) for s in slots] == [False, True, False]
    assert len([r for r in memory_on.received if r["path"].endswith("/answers")]) == fetches
    assert not [q for q in queries.captured_queries if "pendingask" in q["sql"]]


def test_the_questions_out_flag_falls_only_with_the_last_answer(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    from pippa_memory.turn.answers import QUESTIONS_OUT, record_answered

    first = tool_output(conversation, "ask one thing")["ask_id"]
    second = tool_output(conversation, "ask another thing")["ask_id"]

    record_answered(conversation, ask_ids=[first])
    assert Conversation.objects.get(pk=conversation.pk).extension_flags == [QUESTIONS_OUT]
    record_answered(conversation, ask_ids=[second])
    assert Conversation.objects.get(pk=conversation.pk).extension_flags == []
    assert conversation.extension_flags == []


def test_an_ask_whose_row_is_rolled_back_leaves_no_flag(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    from django.db import transaction

    from pippa_memory.turn.answers import record_ask

    def failing_turn() -> None:
        with transaction.atomic():
            record_ask(conversation=conversation, ask_id="ask_x", question="q")
            raise RuntimeError("the turn failed")

    with pytest.raises(RuntimeError):
        failing_turn()

    assert Conversation.objects.get(pk=conversation.pk).extension_flags == []
    assert not PendingAsk.objects.exists()


def test_ask_with_the_engine_down_is_unavailable_and_nothing_waits(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.set_fault("down")

    output = tool_output(conversation, "ask anything")

    assert output["error"] == "memory_unavailable"
    assert not PendingAsk.objects.exists()
    assert Conversation.objects.get(pk=conversation.pk).extension_flags == []


def test_the_memory_tool_is_rendered_in_every_adapters_format(
    kit: Kit, kit_conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = kit_conversation
    captured: list[Any] = []
    if kit.adapter == "offline":
        from webui.vessels.offline import OfflineAdapter

        original = OfflineAdapter.send
        monkeypatch.setattr(
            OfflineAdapter, "send", lambda self, r: (captured.append(r), original(self, r))[1]
        )
        run_turn(conversation=conversation, text="hello")
    else:
        with responses.RequestsMock() as rsps:
            kit.serve(rsps)
            run_turn(conversation=conversation, text="hello")
            captured = [json.loads(c.request.body) for c in rsps.calls]

    request = captured[0]
    assert kit.tool_names(request) == ["memory"]
    assert kit.tool_schema(request) == MEMORY_TOOL.input_schema
    assert MEMORY_TOOL.description in json.dumps(request, ensure_ascii=False)


def test_nul_characters_from_the_engine_are_dropped_not_a_crash(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "tea\u0000 in the blue tin")

    output = tool_output(conversation, "recall tea")

    assert output["items"][0]["text"] == "tea in the blue tin"
