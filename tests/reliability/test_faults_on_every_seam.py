"""Every fault mode of the reference engine, on every seam and door: the chat goes on as it would
with memory off, and nothing is lost."""

from typing import Any

import pytest
from django.utils import timezone

from pippa_memory.models import OutboxEvent, PendingAsk
from pippa_memory.outbox.events import sweep_outbox
from reference_engine.server import ReferenceEngine
from tests.support.scheduled_jobs import hourly_job
from webui.models import Soul, Vessel
from webui.turns.service import run_turn
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

FAULTS = [
    ("down", {}),
    ("latency", {"seconds": 2.0}),
    ("hang", {"seconds": 5.0}),
    ("drip", {"seconds": 0.1}),
    ("error", {"status": 503}),
    ("throttle", {"retry_after": 30}),
    ("garbage", {}),
    ("wrong_shape", {}),
    ("oversized", {}),
    ("reset", {}),
]
IDS = [mode for mode, _ in FAULTS]


@pytest.mark.parametrize(("mode", "options"), FAULTS, ids=IDS)
def test_answers_seam_under_fault_leaves_the_prompt_as_without_answers(
    memory_on: ReferenceEngine,
    conversation: Any,
    sent_requests: list[Any],
    fixed_clock: Any,
    mode: str,
    options: dict[str, Any],
) -> None:
    memory_on.state.remember("pippa", "The answer would be here.")
    run_turn(conversation=conversation, text="ask where is the answer")
    assert PendingAsk.objects.filter(answered_at__isnull=True).exists()
    memory_on.set_fault(mode, paths=[f"/v1/conversations/{conversation.id}/answers"], **options)

    result = run_turn(conversation=conversation, text="carry on")

    slot = sent_requests[-1]["messages"][-1]["content"][1:]
    assert slot == [
        {"type": "text", "text": "Current time: Wednesday 02 December 2026, 09:30 (UTC)."}
    ]
    assert result.assistant_message.content == "(offline) I heard: “carry on”"
    # Not acknowledged, so not lost: with the engine back, the answer rides the next turn.
    memory_on.reset()
    run_turn(conversation=conversation, text="and now")
    assert "The answer would be here." in sent_requests[-1]["messages"][-1]["content"][1]["text"]


@pytest.mark.parametrize(("mode", "options"), FAULTS, ids=IDS)
@pytest.mark.parametrize("verb", ["recall", "ask"])
def test_the_tool_under_fault_answers_unavailable_and_the_turn_goes_on(
    memory_on: ReferenceEngine,
    configure: Any,
    conversation: Any,
    verb: str,
    mode: str,
    options: dict[str, Any],
) -> None:
    configure(TOOL_BUDGET=0.5)
    memory_on.set_fault(mode, paths=["/v1/recall", "/v1/asks"], **options)

    result = run_turn(conversation=conversation, text=f"{verb} the spare key")

    output = result.assistant_message.tool_uses[0]["output"]
    assert output["error"] == "memory_unavailable"
    assert output["reason"]
    assert result.assistant_message.content


@pytest.mark.parametrize(("mode", "options"), FAULTS, ids=IDS)
def test_events_under_fault_change_nothing_in_the_chat_and_are_delivered_later(
    memory_on: ReferenceEngine,
    configure: Any,
    make_conversation: Any,
    sent_requests: list[Any],
    fixed_clock: Any,
    mode: str,
    options: dict[str, Any],
) -> None:
    configure(OUTBOX_DELIVERY_TIMEOUT=0.5, BREAKER_FAIL_MAX=1000)
    healthy = run_turn(conversation=make_conversation(), text="remember the shed key")
    memory_on.set_fault(mode, paths=["/v1/events"], **options)
    faulted = run_turn(conversation=make_conversation(), text="remember the shed key")
    sweep_outbox()  # one attempt of every event, as the worker's poll makes

    assert faulted.assistant_message.content == healthy.assistant_message.content
    # Each turn made two vessel calls (a tool round); the faulted turn's first matches the healthy.
    assert len(sent_requests) == 4
    assert sent_requests[2]["system"] == sent_requests[0]["system"]
    assert sent_requests[2]["messages"] == sent_requests[0]["messages"]
    memory_on.reset()
    OutboxEvent.objects.filter(status="pending").update(next_attempt_at=timezone.now())
    sweep_outbox()
    assert OutboxEvent.objects.filter(status="delivered").count() == 2
    assert set(memory_on.state.events) == {
        str(i) for i in OutboxEvent.objects.values_list("id", flat=True)
    }


@pytest.mark.parametrize(("mode", "options"), FAULTS, ids=IDS)
def test_jobs_and_wakes_under_fault_run_with_the_prompt_of_memory_off(
    memory_on: ReferenceEngine,
    configure: Any,
    soul: Soul,
    offline_vessel: Vessel,
    sent_requests: list[Any],
    fixed_clock: Any,
    mode: str,
    options: dict[str, Any],
) -> None:
    job = hourly_job(soul, offline_vessel, due=False)
    configure(ENABLED=False)
    off_job, off_wake = run_job(job), run_wake(soul=soul)
    # A run's own budget, short enough that the latency, hang and drip faults outlast it.
    configure(ENABLED=True, UNATTENDED_BUDGET=0.5)
    memory_on.state.remember("pippa", "Something the fault hides.")
    memory_on.set_fault(mode, **options)

    on_job, on_wake = run_job(job), run_wake(soul=soul)

    for off, on in ((off_job, on_job), (off_wake, on_wake)):
        assert on.outcome == off.outcome == "succeeded"
        assert on.memory["source"] == "none"
        assert on.memory["reason"]
    baseline_job, baseline_wake, faulted_job, faulted_wake = sent_requests
    assert faulted_job["system"] == baseline_job["system"]
    assert faulted_wake["system"] == baseline_wake["system"]
    assert faulted_job["messages"] == baseline_job["messages"]
