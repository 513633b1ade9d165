"""A turn as events, the same for streamed and unstreamed vessels, and a turn stopped on the way:
by its consumer, by another request, after a tool round; a consumer that goes away stops nothing."""

from typing import Any

import pytest

from tests.support.fakes import PiecewiseAdapter, ScriptedStreamAdapter
from webui.models import Conversation, TurnRound
from webui.turns import lock
from webui.turns.events import (
    Delta,
    StopSignal,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnFailed,
    TurnStarted,
)
from webui.turns.lock import StopOutcome, request_stop
from webui.turns.service import outcome_of, stream_turn
from webui.vessels import registry

pytestmark = pytest.mark.django_db


def test_a_turns_events_come_in_order_and_end_with_the_saved_rows(
    conversation: Conversation, recording_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", PiecewiseAdapter)

    events = list(stream_turn(conversation=conversation, text="remember I like tea"))

    started, *middle, done = events
    assert isinstance(started, TurnStarted)
    assert started.user_message.content == "remember I like tea"
    tools = [e for e in middle if isinstance(e, ToolStarted | ToolFinished)]
    use_id = done.result.assistant_message.tool_uses[0]["id"]
    assert tools == [
        ToolStarted(id=use_id, name="memory", verb="remember"),
        ToolFinished(id=use_id, name="memory", verb="remember"),
    ]
    deltas = "".join(e.text for e in middle if isinstance(e, Delta))
    assert deltas == done.result.assistant_message.content
    assert isinstance(done, TurnDone)
    assert done.result.assistant_message == conversation.messages.get(role="assistant")


def test_a_refused_turn_yields_only_its_failure(conversation: Conversation) -> None:
    events = list(stream_turn(conversation=conversation))

    assert [type(e) for e in events] == [TurnFailed]
    assert events[0].error.code == "nothing_to_retry"


def test_a_consumer_that_stops_reading_does_not_stop_the_turn(
    conversation: Conversation, saved_replies: list[Any]
) -> None:
    events = stream_turn(conversation=conversation, text="hello there")
    assert isinstance(next(events), TurnStarted)

    events.close()

    assert [m.content for m in saved_replies] == ["(offline) I heard: “hello there”"]
    assert Conversation.objects.get(pk=conversation.pk).running_turn_id is None


def test_streamed_and_unstreamed_turns_save_the_same_rows_and_send_the_same_next_request(
    make_conversation: Any,
    recording_tool: Any,
    sent_requests: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import UTC, datetime

    from webui.text.canonical import canonical_json

    monkeypatch.setattr(
        "webui.prompt.assembly.timezone.now", lambda: datetime(2026, 12, 2, tzinfo=UTC)
    )
    texts = ["hello", "remember I like tea", "recall tea", "and now?"]

    def talk(conversation: Conversation) -> tuple[str, str]:
        sent_requests.clear()
        for text in texts:
            for _event in stream_turn(conversation=conversation, text=text, stop=StopSignal()):
                pass
        rows = [
            [m.role, m.content, m.tool_uses, m.rounds, m.usage, m.stopped, m.reply_to is not None]
            for m in conversation.messages.order_by("sequence")
        ]
        uses = [u["id"] for m in conversation.messages.order_by("sequence") for u in m.tool_uses]
        saved, sent = canonical_json(rows), canonical_json(sent_requests)
        for index, use_id in enumerate(uses):  # ids derive from each conversation's message ids
            saved, sent = saved.replace(use_id, f"<{index}>"), sent.replace(use_id, f"<{index}>")
        return saved, sent

    unstreamed = talk(make_conversation())
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", PiecewiseAdapter)
    streamed = talk(make_conversation())

    assert streamed == unstreamed


def stop_on_piece(conversation: Conversation, piece: int) -> Any:
    """A hook that asks the running turn to stop, as another request would, before ``piece``."""

    def hook(index: int) -> None:
        if index == piece:
            running = Conversation.objects.get(pk=conversation.pk).running_turn_id
            stopping = request_stop(conversation=conversation, turn_id=str(running))
            assert stopping is StopOutcome.STOPPING

    return staticmethod(hook)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[ScriptedStreamAdapter]:
    monkeypatch.setattr(lock, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(ScriptedStreamAdapter, "closed_early", False)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)
    return ScriptedStreamAdapter


def test_a_stopped_turn_saves_its_partial_text_marked_stopped_and_fires_once(
    conversation: Conversation,
    scripted: Any,
    monkeypatch: pytest.MonkeyPatch,
    saved_replies: list[Any],
) -> None:
    monkeypatch.setattr(scripted, "between", stop_on_piece(conversation, 2))

    result = outcome_of(
        stream_turn(conversation=conversation, text="tell me a story", streamed=True)
    )

    reply = result.assistant_message
    assert (reply.content, reply.stopped) == ("Once upon a time ", True)
    assert reply.reply_to == result.user_message
    assert scripted.closed_early
    assert saved_replies == [reply]
    assert Conversation.objects.get(pk=conversation.pk).running_turn_id is None


def test_a_stop_signal_set_by_the_consumer_keeps_the_text_so_far(
    conversation: Conversation, scripted: Any
) -> None:
    stop = StopSignal()
    events = []
    for event in stream_turn(conversation=conversation, text="a story", stop=stop, streamed=True):
        events.append(event)
        if isinstance(event, Delta):
            stop.set()

    assert [e.text for e in events if isinstance(e, Delta)] == ["Once "]
    reply = events[-1].result.assistant_message
    assert (reply.content, reply.stopped) == ("Once ", True)


def test_a_turn_stopped_after_a_tool_round_keeps_its_tool_uses(
    conversation: Conversation, recording_tool: Any
) -> None:
    stop = StopSignal()
    for event in stream_turn(
        conversation=conversation, text="remember I like tea", stop=stop, streamed=True
    ):
        if isinstance(event, ToolFinished):
            stop.set()

    reply = conversation.messages.get(role="assistant")
    assert (reply.content, reply.stopped) == ("", True)
    assert [use["input"]["text"] for use in reply.tool_uses] == ["I like tea"]
    assert reply.rounds == [{"text": "", "tool_use_ids": [reply.tool_uses[0]["id"]]}]
    assert not TurnRound.objects.exists()
