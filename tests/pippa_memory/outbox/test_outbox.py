"""The turn event: every assistant row reaches the engine through a transactional outbox, once in
effect, whatever the engine, the worker or the transaction does."""

import random
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core import checks
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.utils import timezone

from pippa_memory.models import OutboxEvent
from pippa_memory.outbox.delivery import deliver_due, delivery_lease
from pippa_memory.outbox.doorbell import rings_by_trigger
from pippa_memory.outbox.events import sweep_outbox
from provider_doubles import Kit
from reference_engine.server import ReferenceEngine
from webui.models import Conversation, Message
from webui.turns.events import StopSignal, ToolFinished
from webui.turns.service import run_turn, stream_turn

pytestmark = pytest.mark.django_db


def assistant_row(conversation: Conversation, text: str = "noted", **fields: Any) -> Message:
    return Message.objects.create(
        conversation=conversation,
        role="assistant",
        content=text,
        vessel=conversation.vessel,
        **fields,
    )


def make_all_due() -> None:
    """Time passes: every pending event's next attempt has come."""
    OutboxEvent.objects.filter(status="pending").update(next_attempt_at=timezone.now())


def kinds(outcomes: list[Any]) -> list[str]:
    return [outcome.kind for outcome in outcomes]


def deliver_all_due() -> list[str]:
    """One attempt of every event due now, each claimed on its own as a worker of batch 1 would."""
    now, made = timezone.now(), []
    while outcomes := deliver_due(limit=1, now=now):
        made += kinds(outcomes)
    return made


# -- the receiver ------------------------------------------------------------------------------


def test_an_exception_after_the_save_leaves_no_event(conversation: Conversation) -> None:
    def failing_turn() -> None:
        with transaction.atomic():
            assistant_row(conversation)
            raise RuntimeError("the turn failed after the row was saved")

    with pytest.raises(RuntimeError):
        failing_turn()

    assert not OutboxEvent.objects.exists()
    assert not Message.objects.exists()


def test_a_commit_leaves_exactly_one_event_and_wakes_the_worker_after_it(
    conversation: Conversation, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        message = assistant_row(conversation)
        assert OutboxEvent.objects.count() == 1
        assert callbacks == []  # nothing is enqueued before the commit

    # SQLite rings with a datagram after the commit; PostgreSQL's outbox trigger rings at commit
    # with no callback (both heard only after it: test_outbox_doorbell.py).
    assert len(callbacks) == (0 if rings_by_trigger() else 1)
    event = OutboxEvent.objects.get()
    assert event.message_id == message.id
    assert event.status == "pending"
    assert event.attempts == 0


def test_user_rows_and_edits_emit_nothing(conversation: Conversation) -> None:
    Message.objects.create(conversation=conversation, role="user", content="hi")
    reply = assistant_row(conversation)
    reply.content = "edited"
    reply.save()

    assert OutboxEvent.objects.count() == 1


def test_the_payload_is_built_from_the_stored_row(conversation: Conversation, user: Any) -> None:
    run_turn(conversation=conversation, text="remember the bins go out on Tuesday")

    event = OutboxEvent.objects.get()
    message = Message.objects.get(role="assistant")
    conversation.refresh_from_db()
    payload = event.payload
    assert payload["type"] == "conversation.turn"
    assert payload["id"] == str(event.id)
    assert payload["soul"] == "pippa"
    assert payload["conversation"] == {
        "id": str(conversation.id),
        "pinned_head": conversation.pinned_head,
        "viewer": {"member": str(user.pk), "name": "Alice"},
        "vessel": "offline",
        "kind": "chat",
    }
    assert payload["message"]["id"] == str(message.id)
    assert payload["message"]["role"] == "assistant"
    assert payload["message"]["content"] == message.content
    assert payload["message"]["tool_uses"] == [
        {
            "id": message.tool_uses[0]["id"],
            "name": "memory",
            "verb": "remember",
            "scope": "private",
            "input": {"verb": "remember", "text": "the bins go out on Tuesday"},
            "output": message.tool_uses[0]["output"],
        }
    ]
    assert message.tool_uses[0]["output"]["scope"] == "private"


def test_a_remember_the_tool_refused_carries_no_scope(conversation: Conversation) -> None:
    refused = {
        "id": "t1",
        "name": "memory",
        "input": {"verb": "remember", "text": "x", "scope": "everyone"},
        "output": {"error": "invalid_input", "message": "Unknown scope 'everyone'."},
    }
    other_tool = {**refused, "id": "t2", "name": "notes", "output": {"scope": "household"}}

    assistant_row(conversation, tool_uses=[refused, other_tool])

    entries = OutboxEvent.objects.get().payload["message"]["tool_uses"]
    assert [(e["id"], e["verb"], "scope" in e) for e in entries] == [
        ("t1", "remember", False),
        ("t2", "remember", False),
    ]


def test_nothing_is_written_when_memory_is_off(configure: Any, conversation: Conversation) -> None:
    configure(ENABLED=False)

    run_turn(conversation=conversation, text="hello")

    assert not OutboxEvent.objects.exists()


def test_nothing_is_written_for_a_temporary_chat(make_conversation: Any) -> None:
    run_turn(conversation=make_conversation(temporary=True), text="remember a secret")

    assert not OutboxEvent.objects.exists()


@pytest.mark.parametrize("kind", ["job", "wake"])
def test_unattended_rows_emit_the_event_too(make_conversation: Any, kind: str) -> None:
    conversation = make_conversation(viewer=None, kind=kind)

    assistant_row(conversation, "an unattended post")

    payload = OutboxEvent.objects.get().payload
    assert payload["conversation"]["kind"] == kind
    assert payload["conversation"]["viewer"] is None


def test_the_admin_cannot_write_an_assistant_row_so_it_sends_no_event(
    conversation: Conversation, make_user: Any
) -> None:
    # History is read only in the admin (a hand-written reply would rewrite what the soul said);
    # every path that does save an assistant row emits the event (the tests above).
    client = Client()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))

    response = client.post(
        "/admin/webui/message/add/",
        {
            "conversation": str(conversation.id),
            "role": "assistant",
            "content": "written by hand",
            "tool_uses": "[]",
            "rounds": "[]",
            "usage": "{}",
            "vessel": "",
        },
    )

    assert response.status_code == 403
    assert not Message.objects.exists()
    assert not OutboxEvent.objects.exists()


# -- delivery over real sockets ------------------------------------------------------------------


def test_a_delivered_event_reaches_the_engine_with_its_id_as_idempotency_key(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="remember Ada likes jam")
    event = OutboxEvent.objects.get()

    assert kinds(deliver_due(limit=10)) == ["delivered"]

    event.refresh_from_db()
    assert (event.status, event.attempts, event.last_status) == ("delivered", 1, 202)
    (posted,) = [r for r in memory_on.received if r["path"] == "/v1/events"]
    assert posted["headers"]["Idempotency-Key"] == str(event.id)
    assert posted["body"] == event.payload
    assert [m.text for m in memory_on.state.souls["pippa"].memories] == ["Ada likes jam"]
    assert deliver_due(limit=10) == []  # delivered: never claimed again


def test_the_event_says_which_message_a_reply_answers_and_whether_it_was_stopped(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="hello")
    stop = StopSignal()
    for event in stream_turn(
        conversation=conversation, text="remember Ada likes jam", stop=stop, streamed=True
    ):
        if isinstance(event, ToolFinished):
            stop.set()

    assert kinds(deliver_due(limit=10)) == ["delivered", "delivered"]
    asked = conversation.messages.filter(role="user").order_by("sequence")
    posted = [r["body"]["message"] for r in memory_on.received if r["path"] == "/v1/events"]
    sent = sorted((m["answers"], m["stopped"], [u["verb"] for u in m["tool_uses"]]) for m in posted)
    assert sent == sorted([(str(asked[0].id), False, []), (str(asked[1].id), True, ["remember"])])
    assert [m.text for m in memory_on.state.souls["pippa"].memories] == ["Ada likes jam"]


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (409, "delivered"),
        (410, "dead"),
        (400, "dead"),
        (301, "retry"),
        (503, "retry"),
        (500, "retry"),
    ],
)
def test_engine_answers_are_classified(
    memory_on: ReferenceEngine, conversation: Conversation, status: int, outcome: str
) -> None:
    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    memory_on.set_fault("error", status=status, paths=["/v1/events"])

    assert kinds(deliver_due(limit=10)) == [outcome]

    event.refresh_from_db()
    expected_status = {"delivered": "delivered", "dead": "dead", "retry": "pending"}[outcome]
    assert event.status == expected_status
    assert event.last_status == status
    # One request, and no request to where a redirect pointed.
    assert len(memory_on.received) == 1
    if outcome == "retry":
        assert event.next_attempt_at > timezone.now()
        assert event.last_error


def test_retry_after_is_honoured(memory_on: ReferenceEngine, conversation: Conversation) -> None:
    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    memory_on.set_fault("throttle", retry_after=120)
    before = timezone.now()

    (result,) = deliver_due(limit=10)

    event.refresh_from_db()
    assert result.kind == "retry"
    assert result.next_attempt_at == event.next_attempt_at
    assert event.next_attempt_at >= before + timedelta(seconds=120)
    assert event.last_status == 429


@pytest.mark.parametrize("status", [200, 410])
def test_only_a_retry_says_when_to_retry(
    memory_on: ReferenceEngine, conversation: Conversation, status: int
) -> None:
    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    if status != 200:
        memory_on.set_fault("error", status=status, paths=["/v1/events"])

    (result,) = deliver_due(limit=10)

    assert result.event.id == str(event.id)
    assert result.kind == {200: "delivered", 410: "dead"}[status]
    assert result.next_attempt_at is None


def test_a_retried_event_is_claimed_again_only_once_it_is_due(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    memory_on.set_fault("throttle", retry_after=120)
    assert [o.kind for o in deliver_due(limit=10)] == ["retry"]
    memory_on.reset()

    assert deliver_due(limit=10) == []  # not due for two minutes
    make_all_due()
    assert [o.kind for o in deliver_due(limit=10)] == ["delivered"]

    event.refresh_from_db()
    assert (event.status, event.attempts, event.last_status) == ("delivered", 2, 202)


def queries_of(run: Any) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        run()
    return [q["sql"] for q in queries.captured_queries]


def test_a_batch_is_claimed_in_one_query_and_recorded_in_one_per_outcome(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    for _ in range(10):
        assistant_row(conversation)

    delivered = queries_of(lambda: deliver_due(limit=10))

    assert len(delivered) == 2, delivered
    assert delivered[0].startswith("UPDATE")
    assert "RETURNING" in delivered[0]
    assert OutboxEvent.objects.filter(status="delivered", attempts=1).count() == 10

    for _ in range(6):
        assistant_row(conversation)
    memory_on.set_fault("error", status=503, paths=["/v1/events"], times=2)
    mixed = queries_of(lambda: deliver_due(limit=10))

    # One claim, then one update for the delivered and one for the retried.
    assert len(mixed) == 3, mixed
    assert OutboxEvent.objects.filter(status="delivered").count() == 14
    retried = OutboxEvent.objects.filter(status="pending", attempts=1, last_status=503)
    assert retried.count() == 2
    assert all(e.next_attempt_at > timezone.now() for e in retried)


def test_backoff_grows_with_full_jitter_and_is_capped(
    configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pippa_memory.outbox.delivery import retry_delay

    configure(OUTBOX_BASE_DELAY=5.0, OUTBOX_MAX_DELAY=60.0)
    # Seeded, so the statistical assertions below give the same verdict on every run.
    monkeypatch.setattr("webui.outbound_http.random", random.Random(13))

    samples = {n: [retry_delay(attempts=n, retry_after=None) for _ in range(200)] for n in range(8)}

    assert all(0 <= d <= 5.0 for d in samples[0])
    assert all(0 <= d <= 60.0 for d in samples[7])
    assert max(samples[7]) > 20  # the cap, not the base, bounds later attempts
    assert len({round(d, 6) for d in samples[3]}) > 100  # jittered, not a fixed schedule


def test_an_event_still_failing_after_the_max_age_is_dead_and_reported(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation, caplog: Any
) -> None:
    configure(OUTBOX_MAX_AGE=60.0, OUTBOX_BASE_DELAY=120.0, OUTBOX_MAX_DELAY=120.0)
    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    memory_on.set_fault("error", status=503)
    OutboxEvent.objects.filter(pk=event.pk).update(
        created_at=timezone.now() - timedelta(seconds=59)
    )

    with caplog.at_level("ERROR"):
        outcomes = []
        for _ in range(20):
            make_all_due()
            outcomes.extend(kinds(deliver_due(limit=10)))
            if outcomes[-1] == "dead":
                break

    assert outcomes[-1] == "dead"
    assert f"Turn event {event.id} is dead (retries ran out)" in caplog.text
    found = [m for m in checks.run_checks() if m.id == "pippa_memory.W003"]
    assert len(found) == 1


def test_a_reset_after_the_engine_processed_an_event_is_redelivered_once_in_effect(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="remember the boiler code is 4471")
    event = OutboxEvent.objects.get()
    memory_on.set_fault("reset", paths=["/v1/events"], times=1)

    assert kinds(deliver_due(limit=10)) == ["retry"]
    make_all_due()
    assert kinds(deliver_due(limit=10)) == ["delivered"]

    posts = [r for r in memory_on.received if r["path"] == "/v1/events"]
    assert [p["headers"]["Idempotency-Key"] for p in posts] == [str(event.id)] * 2
    assert list(memory_on.state.events) == [str(event.id)]
    assert [m.text for m in memory_on.state.souls["pippa"].memories] == ["the boiler code is 4471"]


def test_the_engine_down_for_500_turns_then_up_delivers_all_500_once(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    # Keep every attempt going to the socket: each turn also asks for the head once (the pin
    # after an engine failure), so the breaker must outlast 500 turns and 500 deliveries.
    # deliver_all_due claims each event against one `now`, so every lease ends one lease after
    # it: 500 attempts on a busy machine need a margin past the default's ten seconds.
    configure(BREAKER_FAIL_MAX=100_000, OUTBOX_LEASE_MARGIN=300.0)
    memory_on.set_fault("down")
    for index in range(500):
        run_turn(conversation=conversation, text=f"remember fact number {index}")
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}
    assert len(committed) == 500
    assert set(deliver_all_due()) == {"retry"}
    assert OutboxEvent.objects.filter(status="pending").count() == 500

    memory_on.reset()
    # A burst of 500 may see a few attempts time out on a busy machine; those are retried, as
    # the worker would, until nothing is pending (bounded), and nothing may arrive twice.
    for _ in range(5):
        make_all_due()
        deliver_all_due()
        if not OutboxEvent.objects.filter(status="pending").exists():
            break
    assert set(OutboxEvent.objects.values_list("status", flat=True)) == {"delivered"}

    assert set(memory_on.state.events) == committed
    assert len(memory_on.state.souls["pippa"].memories) == 500
    assert OutboxEvent.objects.filter(status="delivered").count() == 500


def test_a_crash_between_commit_and_ring_is_found_by_the_sweep(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    # The `db` fixture never runs on-commit callbacks: exactly a crash right after the commit.
    for _ in range(3):
        assistant_row(conversation)

    assert sweep_outbox() == 3

    assert set(memory_on.state.events) == {
        str(i) for i in OutboxEvent.objects.values_list("id", flat=True)
    }
    assert set(OutboxEvent.objects.values_list("status", flat=True)) == {"delivered"}
    assert sweep_outbox() == 0


def test_a_claimed_delivery_is_not_taken_twice(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    from pippa_memory.outbox.queue import claim_due

    event = OutboxEvent.objects.get(message_id=assistant_row(conversation).id)
    now = timezone.now()

    assert [e.id for e in claim_due(now=now, until=now + delivery_lease(), limit=10)] == [
        str(event.id)
    ]
    assert claim_due(now=now, until=now + delivery_lease(), limit=10) == []
    assert deliver_due(limit=10) == []
    assert memory_on.received == []


# -- operators -----------------------------------------------------------------------------------


def test_status_prints_the_backlog_and_dead_counts(conversation: Conversation) -> None:
    events = [OutboxEvent.objects.get(message_id=assistant_row(conversation).id) for _ in range(3)]
    OutboxEvent.objects.filter(pk=events[0].pk).update(status="dead")
    OutboxEvent.objects.filter(pk=events[1].pk).update(status="delivered")
    out = StringIO()

    call_command("memory_outbox", "status", stdout=out)

    text = out.getvalue()
    assert "pending:   1 (1 due now)" in text
    assert "delivered: 1" in text
    assert "dead:      1" in text
    assert "memory_outbox redrive" in text


@pytest.mark.django_db(transaction=True)
def test_redrive_revives_dead_events_and_shows_progress_while_the_worker_drains_them(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    import threading

    from pippa_memory.outbox.worker import Doorbell, run_worker
    from tests.support.live_servers import free_port

    # A poll far longer than the test: only redrive's ring can wake the worker in time.
    configure(OUTBOX_POLL_INTERVAL=300.0, OUTBOX_WAKE_ADDRESS=f"127.0.0.1:{free_port()}")
    events = [OutboxEvent.objects.get(message_id=assistant_row(conversation).id) for _ in range(4)]
    OutboxEvent.objects.filter(pk__in=[e.pk for e in events[:2]]).update(status="dead")
    OutboxEvent.objects.filter(pk__in=[e.pk for e in events[2:]]).update(
        next_attempt_at=timezone.now() + timedelta(hours=1)
    )
    out = StringIO()
    bell = Doorbell()
    hears_rings: list[bool] = []
    ready = threading.Event()

    def on_ready(hears: bool) -> None:
        hears_rings.append(hears)
        ready.set()

    worker = threading.Thread(
        target=run_worker,
        kwargs={"threads": 1, "batch": 10, "drain": False, "bell": bell, "on_ready": on_ready},
    )
    worker.start()
    try:
        assert ready.wait(timeout=30)
        assert hears_rings == [True]
        call_command("memory_outbox", "redrive", "--timeout", "30", stdout=out)
    finally:
        bell.stop()
        worker.join(timeout=30)

    text = out.getvalue()
    assert "Made 4 event(s) due now." in text
    assert "delivering" in text
    assert "4/4" in text
    assert "Drained: 4 delivered, 0 dead." in text
    assert OutboxEvent.objects.filter(status="delivered").count() == 4
    assert set(memory_on.state.events) == {str(e.id) for e in events}


def test_the_admin_lists_events_and_offers_retry_and_revive(
    conversation: Conversation, make_user: Any
) -> None:
    client = Client()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    pending, dead = (
        OutboxEvent.objects.get(message_id=assistant_row(conversation).id) for _ in range(2)
    )
    OutboxEvent.objects.filter(pk=dead.pk).update(status="dead")
    OutboxEvent.objects.filter(pk=pending.pk).update(
        next_attempt_at=timezone.now() + timedelta(hours=2)
    )

    listing = client.get("/admin/pippa_memory/outboxevent/?status__exact=dead")
    assert str(dead.id) in listing.content.decode()
    assert str(pending.id) not in listing.content.decode()
    detail = client.get(f"/admin/pippa_memory/outboxevent/{dead.pk}/change/").content.decode()
    assert "conversation.turn" in detail
    assert client.get("/admin/pippa_memory/outboxevent/add/").status_code == 403

    url = "/admin/pippa_memory/outboxevent/"
    client.post(url, {"action": "retry_now", "_selected_action": [pending.pk]})
    client.post(url, {"action": "revive_dead", "_selected_action": [dead.pk]})

    pending.refresh_from_db()
    dead.refresh_from_db()
    assert pending.next_attempt_at <= timezone.now()
    assert dead.status == "pending"
    assert dead.revived_at is not None


def test_chat_turns_on_every_vessel_emit_the_event(
    kit: Kit, kit_conversation: Conversation
) -> None:
    import responses

    conversation = kit_conversation
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        if kit.adapter != "offline":  # the offline vessel answers itself
            kit.serve(rsps)
        result = run_turn(conversation=conversation, text="remember every vessel reports")

    event = OutboxEvent.objects.get()
    assert event.message_id == result.assistant_message.id
    assert event.payload["conversation"]["vessel"] == "v"
    assert [u["verb"] for u in event.payload["message"]["tool_uses"]] == ["remember"]
