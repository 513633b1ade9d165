"""A process that is shutting down stops its running turns once their time is up and saves what
had arrived marked interrupted, not stopped; until then they run on, and a reply the member had
stopped stays stopped."""

from collections.abc import Callable, Iterator

import pytest

from tests.support.fakes import PiecewiseAdapter
from webui.models import Conversation
from webui.turns.events import Delta, StopSignal, TurnDone
from webui.turns.service import stream_turn
from webui.turns.shutdown import begin_shutdown, reset_shutdown
from webui.vessels import registry

pytestmark = pytest.mark.django_db

TEXT = "a message long enough to arrive in many pieces of three characters each"


@pytest.fixture(autouse=True)
def piecewise(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", PiecewiseAdapter)
    yield
    reset_shutdown()


def test_a_turn_running_when_its_time_is_up_is_saved_as_far_as_it_got_marked_interrupted(
    conversation: Conversation,
) -> None:
    pieces, done = [], None
    for event in stream_turn(conversation=conversation, text=TEXT, streamed=True):
        if isinstance(event, Delta):
            pieces.append(event.text)
            if len(pieces) == 2:
                begin_shutdown(finish_within=0)
        if isinstance(event, TurnDone):
            done = event.result.assistant_message

    assert done is not None
    assert (done.interrupted, done.stopped) == (True, False)
    assert done.content == "".join(pieces)
    assert 0 < len(done.content) < len(TEXT)


def test_a_turn_within_its_time_finishes_and_a_stopped_one_stays_stopped(
    conversation: Conversation, make_conversation: Callable[..., Conversation]
) -> None:
    begin_shutdown(finish_within=60)
    finished = [
        event
        for event in stream_turn(conversation=conversation, text=TEXT, streamed=True)
        if isinstance(event, TurnDone)
    ][0].result.assistant_message
    stop = StopSignal()
    for event in stream_turn(conversation=make_conversation(), text=TEXT, stop=stop, streamed=True):
        if isinstance(event, Delta):
            stop.set()  # the member pressed Stop
            begin_shutdown(finish_within=0)  # and the process began stopping after it
        if isinstance(event, TurnDone):
            stopped = event.result.assistant_message

    assert (finished.interrupted, finished.stopped) == (False, False)
    assert TEXT in finished.content
    assert (stopped.interrupted, stopped.stopped) == (False, True)
