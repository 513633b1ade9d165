"""A blip at the first turn costs one turn, not the conversation: a conversation pinned absent
because the engine failed is pinned once, at the first later turn the engine answers (reason
``engine_recovered``); one pinned absent by choice never is. One whose block was too large asks
again only once ``ABSENT_RETRY_SECONDS`` has passed (``test_absent_tells_the_truth.py``)."""

from typing import Any

import pytest

from pippa_memory.models import PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.memory_turns import first_turn_while_down
from webui.models import Conversation
from webui.text.canonical import canonical_json
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def head_calls(engine: ReferenceEngine) -> int:
    return sum(1 for r in engine.received if r["path"].endswith("/head"))


def history(conversation: Conversation) -> list[tuple[str, str]]:
    records = PinRecord.objects.filter(conversation=conversation).order_by("created_at", "id")
    return [(r.outcome, r.reason) for r in records]


def without_slot(request: dict[str, Any]) -> list[str]:
    """The request's messages as bytes, the newest user message's per-turn slot set aside."""
    messages = [dict(m) for m in request["messages"]]
    newest = max(i for i, m in enumerate(messages) if m["role"] == "user")
    messages[newest]["content"] = messages[newest]["content"][:1]
    return [canonical_json(m) for m in messages]


def test_an_engine_down_at_turn_1_and_up_at_turn_2_pins_once_with_engine_recovered(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    revision = memory_on.state.remember("pippa", "Alice takes her tea with honey.")
    memory_on.set_fault("down")
    run_turn(conversation=conversation, text="hello")
    assert "<memory" not in sent_requests[0]["system"]

    memory_on.reset()
    run_turn(conversation=conversation, text="again")
    calls_at_recovery = head_calls(memory_on)
    memory_on.state.remember("pippa", "Learned after the recovery.")
    run_turn(conversation=conversation, text="and again")

    conversation.refresh_from_db()
    assert conversation.pinned_head == revision
    assert history(conversation) == [
        ("absent", "connection_failed"),
        ("pinned", "engine_recovered"),
    ]
    _, second, third = sent_requests
    assert "Alice takes her tea with honey." in second["system"]
    assert "Learned after the recovery." not in third["system"]
    # From the recovery on, each request starts with the previous one byte for byte.
    assert canonical_json(third["system"]) == canonical_json(second["system"])
    stable = without_slot(second)
    assert [canonical_json(m) for m in third["messages"][: len(stable)]] == stable
    assert head_calls(memory_on) == calls_at_recovery == 2  # pinned for life: no call after it


def test_an_engine_still_failing_at_later_turns_stays_absent_and_writes_no_record(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    memory_on.set_fault("error", status=503)
    for text in ["one", "two"]:
        run_turn(conversation=conversation, text=text)
    assert len({canonical_json(r["system"]) for r in sent_requests}) == 1
    assert history(conversation) == [("absent", "http_error")]

    memory_on.reset()
    run_turn(conversation=conversation, text="three")

    assert history(conversation) == [("absent", "http_error"), ("pinned", "engine_recovered")]
    assert "<memory" in sent_requests[-1]["system"]


def test_an_open_breaker_keeps_later_turns_off_the_socket(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(BREAKER_FAIL_MAX=1, BREAKER_RESET_TIMEOUT=300.0)
    memory_on.set_fault("error", status=503)
    run_turn(conversation=conversation, text="hello")
    memory_on.reset()

    for text in ["two", "three"]:
        run_turn(conversation=conversation, text=text)

    assert head_calls(memory_on) == 1
    assert history(conversation) == [("absent", "http_error")]


def test_a_recovery_that_finds_the_block_too_large_records_it_and_waits_for_the_spacing(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(MAX_BLOCK_CHARS=50)
    memory_on.state.remember("pippa", "x" * 100)
    first_turn_while_down(memory_on, conversation)

    for text in ["two", "three"]:
        run_turn(conversation=conversation, text=text)

    assert history(conversation) == [("absent", "connection_failed"), ("absent", "block_too_large")]
    assert head_calls(memory_on) == 2


def test_memory_switched_off_at_the_first_turn_is_never_pinned_later(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(ENABLED=False)
    run_turn(conversation=conversation, text="hello")
    configure(ENABLED=True)

    run_turn(conversation=conversation, text="again")

    assert history(conversation) == [("absent", "memory_disabled")]
    assert head_calls(memory_on) == 0


def test_a_temporary_chat_is_never_pinned_later(
    memory_on: ReferenceEngine, make_conversation: Any
) -> None:
    conversation = make_conversation(temporary=True)
    for text in ["hello", "again"]:
        run_turn(conversation=conversation, text=text)

    assert history(conversation) == [("absent", "temporary")]
    assert memory_on.received == []


def test_a_block_too_large_at_the_first_turn_is_not_asked_again_within_the_spacing(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(MAX_BLOCK_CHARS=50)
    memory_on.state.remember("pippa", "x" * 100)
    run_turn(conversation=conversation, text="hello")
    configure(MAX_BLOCK_CHARS=16000)

    run_turn(conversation=conversation, text="again")

    assert history(conversation) == [("absent", "block_too_large")]
    assert head_calls(memory_on) == 1


def test_an_unset_engine_url_at_the_first_turn_is_never_pinned_later(
    engine: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="hello")
    configure(URL=engine.url)

    run_turn(conversation=conversation, text="again")

    assert history(conversation) == [("absent", "engine_unconfigured")]
    assert engine.received == []
