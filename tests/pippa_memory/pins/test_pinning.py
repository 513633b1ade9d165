"""The pinned head: one engine call at the first turn, the block stored and reused for life, and
the front of the prompt unchanged by anything the engine does later, down to its failures."""

import threading
from typing import Any

import pytest
from django.db import connection

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import MemoryBlock, PinRecord
from pippa_memory.pins.head import pin_at_first_turn
from pippa_memory.pins.records import request_repin
from pippa_memory.pins.turn_block import RENDERED
from reference_engine.server import ReferenceEngine
from tests.support.concurrently import in_threads
from tests.support.memory_turns import first_turn_while_down
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def head_calls(engine: ReferenceEngine) -> int:
    return sum(1 for r in engine.received if r["path"].endswith("/head"))


def test_the_first_turn_pins_the_head_and_stores_the_block(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    revision = memory_on.state.remember("pippa", "Alice takes her tea with honey.")

    run_turn(conversation=conversation, text="hello")

    conversation.refresh_from_db()
    assert conversation.pinned_head == revision
    assert conversation.pinned_at is not None
    block = MemoryBlock.objects.get(soul=conversation.soul, revision=revision)
    assert "Alice takes her tea with honey." in block.text
    assert block.sha256 == keyed_sha256(block.text)
    record = PinRecord.objects.get(conversation=conversation)
    assert record.outcome == "pinned"
    assert record.revision == revision
    assert record.sha256 == block.sha256
    assert record.engine_latency_ms is not None
    system = sent_requests[0]["system"]
    envelope = f'<memory soul="pippa" revision="{revision}">\n{block.text}\n</memory>'
    vault, rest = system.split("\n\n<memory ", 1)
    assert vault.startswith("## Identity")
    assert "<memory " + rest == f"{envelope}\n\nYou are talking with Alice, a household member."


def test_the_engine_call_carries_the_token_and_a_request_id(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="hello")

    (request,) = memory_on.received
    assert request["headers"]["Authorization"] == "Bearer engine-test-token"
    assert len(request["headers"]["X-Request-Id"]) == 32


def test_block_bytes_stay_the_same_on_turns_2_to_30_while_the_head_moves(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "The first thing.")

    for turn in range(30):
        run_turn(conversation=conversation, text=f"turn {turn}")
        memory_on.state.remember("pippa", f"Something new after turn {turn}.")

    systems = {request["system"] for request in sent_requests}
    assert len(systems) == 1
    assert "Something new" not in systems.pop()
    assert head_calls(memory_on) == 1
    conversation.refresh_from_db()
    assert memory_on.state.souls["pippa"].head != conversation.pinned_head


def test_later_turns_read_the_block_without_a_query_once_rendered(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run_turn(conversation=conversation, text="hello")
    run_turn(conversation=conversation, text="again")

    with CaptureQueriesContext(connection) as queries:
        run_turn(conversation=conversation, text="and again")

    assert not [q for q in queries.captured_queries if "pippa_memory_memoryblock" in q["sql"]]


def test_a_new_conversation_pins_the_new_head(
    memory_on: ReferenceEngine, make_conversation: Any
) -> None:
    first = make_conversation()
    run_turn(conversation=first, text="hello")
    memory_on.state.remember("pippa", "A new fact.")
    second = make_conversation()

    run_turn(conversation=second, text="hello")

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.pinned_head != second.pinned_head
    assert second.pinned_head == memory_on.state.souls["pippa"].head


def test_an_empty_conversation_pins_nothing(
    memory_on: ReferenceEngine, make_conversation: Any
) -> None:
    conversation = make_conversation()

    assert conversation.pinned_at is None
    assert memory_on.received == []
    assert not PinRecord.objects.exists()


FAULTS = [
    ("down", {}, "connection_failed"),
    ("latency", {"seconds": 2.0}, "timeout"),
    ("hang", {"seconds": 5.0}, "timeout"),
    ("drip", {"seconds": 0.1}, "timeout"),
    ("error", {"status": 503}, "http_error"),
    ("error", {"status": 500}, "http_error"),
    ("throttle", {"retry_after": 30}, "http_429"),
    ("garbage", {}, "invalid_json"),
    ("wrong_shape", {}, "wrong_shape"),
    ("oversized", {}, "too_large"),
    ("reset", {}, "connection_failed"),
]


@pytest.mark.parametrize(
    ("mode", "options", "reason"), FAULTS, ids=[f[0] + str(f[1]) for f in FAULTS]
)
def test_under_every_fault_the_turn_completes_with_the_prompt_of_memory_off(
    memory_on: ReferenceEngine,
    configure: Any,
    make_conversation: Any,
    sent_requests: list[Any],
    fixed_clock: Any,
    mode: str,
    options: dict[str, Any],
    reason: str,
) -> None:
    configure(ENABLED=False)
    off = run_turn(conversation=make_conversation(), text="hello")
    configure(ENABLED=True)
    memory_on.state.remember("pippa", "A memory the fault hides.")
    memory_on.set_fault(mode, **options)
    conversation = make_conversation()

    faulted = run_turn(conversation=conversation, text="hello")

    assert faulted.assistant_message.content == off.assistant_message.content
    baseline, under_fault = sent_requests
    assert under_fault["system"] == baseline["system"]
    assert under_fault["messages"] == baseline["messages"]
    conversation.refresh_from_db()
    assert conversation.pinned_at is not None
    assert conversation.pinned_head is None
    record = PinRecord.objects.get(conversation=conversation)
    assert (record.outcome, record.reason) == ("absent", reason)

    # A failure is not a choice: the first later turn the engine answers pins the conversation.
    memory_on.reset()
    run_turn(conversation=conversation, text="hello again")
    assert "A memory the fault hides." in sent_requests[-1]["system"]
    reasons = PinRecord.objects.filter(conversation=conversation).order_by("created_at", "id")
    assert [r.reason for r in reasons] == [reason, "engine_recovered"]


def test_a_refused_connection_pins_absent(
    configure: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    with socket_nobody_listens_on() as url:
        configure(URL=url)
        run_turn(conversation=conversation, text="hello")

    assert PinRecord.objects.get().reason == "connection_failed"
    assert "<memory" not in sent_requests[0]["system"]


def socket_nobody_listens_on() -> Any:
    import contextlib
    import socket

    @contextlib.contextmanager
    def closed_port() -> Any:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        yield f"http://127.0.0.1:{port}"

    return closed_port()


def test_an_unset_engine_url_pins_absent_with_no_traffic(
    engine: ReferenceEngine, memory_settings: dict[str, Any], conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="hello")

    assert PinRecord.objects.get().reason == "engine_unconfigured"
    assert engine.received == []


def test_memory_switched_off_makes_no_request_at_all(
    memory_on: ReferenceEngine, configure: Any, make_conversation: Any
) -> None:
    configure(ENABLED=False)

    for text in ["hello", "remember tea", "recall tea", "ask about tea"]:
        run_turn(conversation=make_conversation(), text=text)

    assert memory_on.received == []
    assert set(PinRecord.objects.values_list("reason", flat=True)) == {"memory_disabled"}
    assert all(c.offered_tools == [] for c in Conversation.objects.all())


def test_a_temporary_chat_pins_absent_without_asking(
    memory_on: ReferenceEngine, make_conversation: Any
) -> None:
    run_turn(conversation=make_conversation(temporary=True), text="hello")

    assert memory_on.received == []
    assert PinRecord.objects.get().reason == "temporary"


def test_a_block_over_the_cap_is_refused_never_cut(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation, sent_requests: list[Any]
) -> None:
    configure(MAX_BLOCK_CHARS=50)
    memory_on.state.remember("pippa", "x" * 100)

    run_turn(conversation=conversation, text="hello")

    assert PinRecord.objects.get().reason == "block_too_large"
    assert "<memory" not in sent_requests[0]["system"]
    assert not MemoryBlock.objects.exists()


def test_the_breaker_opens_and_the_engine_sees_no_connection_until_reset(
    memory_on: ReferenceEngine, configure: Any, make_conversation: Any
) -> None:
    # Long enough that a loaded machine's five turns all fall inside it (0.6 s did not, once).
    configure(BREAKER_FAIL_MAX=2, BREAKER_RESET_TIMEOUT=2.0)
    memory_on.set_fault("error", status=503)

    for _ in range(5):
        run_turn(conversation=make_conversation(), text="hello")

    assert head_calls(memory_on) == 2
    reasons = list(PinRecord.objects.order_by("created_at", "id").values_list("reason", flat=True))
    assert reasons == ["http_error", "http_error", "breaker_open", "breaker_open", "breaker_open"]

    memory_on.reset()
    threading.Event().wait(2.1)  # past the breaker's reset time: one call may go through
    late = make_conversation()
    run_turn(conversation=late, text="hello")

    assert head_calls(memory_on) == 3
    late.refresh_from_db()
    assert late.pinned_head is not None


def test_a_missing_local_block_is_fetched_by_its_revision(
    memory_on: ReferenceEngine, conversation: Conversation, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Kept at the engine.")
    run_turn(conversation=conversation, text="hello")
    MemoryBlock.objects.all().delete()
    RENDERED.clear()  # as in another process, which has not rendered it yet
    memory_on.state.remember("pippa", "A newer head.")

    run_turn(conversation=conversation, text="again")

    assert sent_requests[0]["system"] == sent_requests[1]["system"]
    conversation.refresh_from_db()
    assert memory_on.received[-1]["path"] == f"/v1/souls/pippa/blocks/{conversation.pinned_head}"


def test_an_admin_repin_takes_effect_at_the_next_turn_and_is_recorded(
    memory_on: ReferenceEngine, conversation: Conversation, make_user: Any
) -> None:
    run_turn(conversation=conversation, text="hello")
    conversation.refresh_from_db()
    first = conversation.pinned_head
    memory_on.state.remember("pippa", "Learned since.")
    admin = make_user("root", is_staff=True)

    request_repin(conversation=conversation, requested_by=admin, reason="engine rebuilt")
    run_turn(conversation=conversation, text="again")

    conversation.refresh_from_db()
    assert conversation.pinned_head != first
    history = list(PinRecord.objects.order_by("created_at", "id"))
    assert [r.outcome for r in history] == ["pinned", "repin_requested", "pinned"]
    assert history[1].requested_by == admin
    assert history[1].reason == "engine rebuilt"
    assert history[1].revision == first


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_first_turns_end_with_one_pin(
    memory_on: ReferenceEngine, configure: Any, make_conversation: Any
) -> None:
    conversation = make_conversation()
    memory_on.state.remember("pippa", "Shared.")
    # The latency makes the two head calls overlap; the budget is wide so that, on a busy
    # machine, both still get the head (this test is about the race, not the budget).
    memory_on.set_fault("latency", seconds=0.2)
    configure(CHAT_BUDGET=5.0, READ_TIMEOUT=5.0)

    def first_turn(start: threading.Barrier) -> str | None:
        mine = Conversation.objects.select_related("soul").get(pk=conversation.pk)
        start.wait()
        pin_at_first_turn(mine)
        return mine.pinned_head

    seen, errors = in_threads(first_turn, timeout=10)

    assert errors == []
    assert head_calls(memory_on) == 2
    assert PinRecord.objects.filter(conversation=conversation).count() == 1
    conversation.refresh_from_db()
    assert seen == [conversation.pinned_head, conversation.pinned_head]
    assert MemoryBlock.objects.count() == 1


@pytest.mark.xdist_group("redis")
def test_the_breaker_state_can_be_shared_through_redis(
    memory_on: ReferenceEngine, configure: Any, make_conversation: Any
) -> None:
    import os

    import redis

    from pippa_memory.engine.client import BREAKER

    url = "redis://127.0.0.1:6379/14"
    try:
        redis.Redis.from_url(url).flushdb()
    except redis.ConnectionError:
        if os.environ.get("CI") == "true":
            pytest.fail("Redis must run on 127.0.0.1:6379 in CI")
        pytest.skip("no Redis on 127.0.0.1:6379")
    configure(BREAKER_FAIL_MAX=2, BREAKER_RESET_TIMEOUT=60.0, BREAKER_REDIS_URL=url)
    memory_on.set_fault("error", status=503)
    for _ in range(2):
        run_turn(conversation=make_conversation(), text="hello")

    BREAKER.reset()  # as another process would start: a new breaker on the same Redis
    run_turn(conversation=make_conversation(), text="hello")

    assert head_calls(memory_on) == 2
    assert PinRecord.objects.order_by("-created_at", "-id").first().reason == "breaker_open"
    redis.Redis.from_url(url).flushdb()


def settled_turn(conversation: Conversation, text: str) -> Any:
    """A turn of ``conversation`` with its user message saved and its pins settled."""
    from webui.extensions import TurnContext
    from webui.prompt.pins import settle_pins
    from webui.turns.service import save_user_message

    message = save_user_message(conversation=conversation, text=text)
    turn = TurnContext(conversation=conversation, user_message=message, first_turn=False)
    settle_pins(turn)
    return turn


def assert_assembled_without_writes_or_engine_calls(
    turn: Any, engine: ReferenceEngine, holding: str
) -> None:
    """Assembling ``turn``'s prompt writes no row and calls no engine, and its system text holds
    ``holding``."""
    from django.test.utils import CaptureQueriesContext

    from webui.prompt.assembly import assemble_prompt

    calls_before = len(engine.received)
    with CaptureQueriesContext(connection) as queries:
        prompt = assemble_prompt(turn)
    writes = [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith(("INSERT", "UPDATE"))
    ]
    assert writes == []
    assert len(engine.received) == calls_before
    assert holding in prompt.system_text


def test_a_first_turns_block_is_pinned_by_settling_and_only_read_by_assembly(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "Alice takes her tea with honey.")

    turn = settled_turn(conversation, "hello")

    assert head_calls(memory_on) == 1
    assert PinRecord.objects.filter(conversation=conversation, outcome="pinned").count() == 1
    RENDERED.clear()  # the block is read from its row, as in another process
    assert_assembled_without_writes_or_engine_calls(
        turn, memory_on, "Alice takes her tea with honey."
    )


def test_a_missing_block_is_fetched_while_settling_not_while_assembling(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "Kept at the engine.")
    run_turn(conversation=conversation, text="hello")
    MemoryBlock.objects.all().delete()
    RENDERED.clear()

    turn = settled_turn(conversation, "again")

    assert memory_on.received[-1]["path"].startswith("/v1/souls/pippa/blocks/")
    assert_assembled_without_writes_or_engine_calls(turn, memory_on, "Kept at the engine.")


def test_the_recovery_repin_happens_while_settling_not_while_assembling(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "Alice takes her tea with honey.")
    first_turn_while_down(memory_on, conversation)

    turn = settled_turn(conversation, "again")

    reasons = PinRecord.objects.filter(conversation=conversation).order_by("created_at", "id")
    assert [r.reason for r in reasons] == ["connection_failed", "engine_recovered"]
    assert_assembled_without_writes_or_engine_calls(
        turn, memory_on, "Alice takes her tea with honey."
    )
