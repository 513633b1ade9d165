"""Delivery through the real worker process (``manage.py memory_outbox deliver``): a worker killed
with SIGKILL mid-delivery loses nothing, a commit wakes the worker at once, and two workers at once
never send an event twice."""

import os
import signal
import time
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from pippa_memory.models import OutboxEvent
from pippa_memory.outbox.delivery import delivery_lease
from pippa_memory.outbox.events import sweep_outbox
from pippa_memory.outbox.queue import claim_due
from reference_engine.server import ReferenceEngine
from tests.support.live_servers import free_port
from tests.support.outbox_workers import (
    finish,
    start_worker,
    stop,
    wait_until_listening,
    worker_env,
)
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


def event_posts(engine: ReferenceEngine) -> int:
    return sum(1 for r in engine.received if r["path"] == "/v1/events")


def test_a_worker_killed_mid_delivery_loses_nothing(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(OUTBOX_DELIVERY_TIMEOUT=2.0, OUTBOX_LEASE_MARGIN=0.5)
    for index in range(12):
        run_turn(conversation=conversation, text=f"remember killed fact {index}")
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}
    assert len(committed) == 12
    memory_on.set_fault("latency", seconds=30.0, paths=["/v1/events"])

    worker = start_worker(memory_on)
    try:
        for _ in range(600):
            if event_posts(memory_on):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the worker never started a delivery: " + stop(worker))
        os.kill(worker.pid, signal.SIGKILL)  # mid-delivery: the engine is still "thinking"
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    memory_on.reset()
    # The killed worker's claims hold until their lease ends, and nobody takes them before.
    assert OutboxEvent.objects.filter(status="pending").count() == 12
    assert OutboxEvent.objects.due(timezone.now()).count() < 12

    time.sleep(2.6)  # the killed attempt's lease runs out
    drain = start_worker(memory_on, "--drain")
    output = finish(drain)

    assert drain.returncode == 0, output
    assert set(memory_on.state.events) == committed
    assert OutboxEvent.objects.filter(status="delivered").count() == 12
    assert len(memory_on.state.souls["pippa"].memories) == 12


def test_with_the_default_settings_a_killed_workers_event_is_delivered_within_30_s(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="remember the fact a killed worker held")
    (event,) = OutboxEvent.objects.values_list("id", flat=True)
    OutboxEvent.objects.update(status="pending", attempts=0, next_attempt_at=timezone.now())
    memory_on.reset(state=True)
    memory_on.set_fault("latency", seconds=60.0, paths=["/v1/events"])
    defaults = worker_env(memory_on)
    for name in ("OUTBOX_DELIVERY_TIMEOUT", "OUTBOX_LEASE_MARGIN"):
        del defaults[f"PIPPA_MEMORY_{name}"]

    worker = start_worker(memory_on, env=defaults)
    try:
        wait_until_listening(worker)
        deadline = time.monotonic() + 60
        while not event_posts(memory_on):
            if time.monotonic() > deadline:
                pytest.fail("the worker never started a delivery: " + stop(worker))
            time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)  # mid-delivery, its claim held
        killed = time.monotonic()
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    memory_on.reset()
    successor = start_worker(memory_on, env=defaults)
    try:
        while str(event) not in memory_on.state.events:
            if time.monotonic() - killed > 45:
                break
            time.sleep(0.1)
        took = time.monotonic() - killed
    finally:
        output = stop(successor)

    assert str(event) in memory_on.state.events, output
    assert took <= 30, f"redelivered {took:.1f} s after the kill"
    assert OutboxEvent.objects.get().status == "delivered"


def test_an_event_a_lost_worker_claimed_is_due_again_once_its_lease_ends(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(OUTBOX_DELIVERY_TIMEOUT=2.0, OUTBOX_LEASE_MARGIN=0.5)
    run_turn(conversation=conversation, text="remember the claimed fact")
    event = OutboxEvent.objects.get()
    OutboxEvent.objects.filter(pk=event.pk).update(status="pending", delivered_at=None)
    now = timezone.now()
    assert claim_due(now=now, until=now + delivery_lease(), limit=1)  # ...and its worker dies

    assert sweep_outbox() == 0  # held by the lease
    event.refresh_from_db()
    assert event.next_attempt_at > timezone.now() + timedelta(seconds=2)

    assert sweep_outbox(now=timezone.now() + timedelta(seconds=3)) == 1
    event.refresh_from_db()
    assert event.status == "delivered"


def test_a_commit_wakes_the_worker_at_once(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    address = f"127.0.0.1:{free_port()}"
    configure(OUTBOX_WAKE_ADDRESS=address)
    # The worker polls only every five minutes: an event delivered within seconds was rung for.
    env = worker_env(memory_on, OUTBOX_POLL_INTERVAL="300", OUTBOX_WAKE_ADDRESS=address)
    worker = start_worker(memory_on, env=env)
    try:
        wait_until_listening(worker)
        latencies = []
        for index in range(5):
            run_turn(conversation=conversation, text=f"remember rung fact {index}")
            committed = time.monotonic()
            while event_posts(memory_on) <= index:
                if time.monotonic() - committed > 20:
                    pytest.fail(f"turn {index}'s event was not delivered within 20 s of its commit")
                time.sleep(0.005)
            latencies.append(time.monotonic() - committed)
    finally:
        output = stop(worker)

    assert OutboxEvent.objects.filter(status="delivered").count() == 5, output
    assert max(latencies) < 20


def test_two_workers_at_once_send_each_event_once(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    for index in range(60):
        run_turn(conversation=conversation, text=f"remember shared fact {index}")
    memory_on.reset(state=True)
    OutboxEvent.objects.update(status="pending", attempts=0, next_attempt_at=timezone.now())
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}

    workers = [start_worker(memory_on, "--drain", "--threads", "3", "--batch", "4") for _ in "ab"]
    outputs = [finish(worker) for worker in workers]

    assert [w.returncode for w in workers] == [0, 0], outputs
    sent = Counter(r["headers"]["Idempotency-Key"] for r in memory_on.received)
    assert set(sent) == committed
    assert set(sent.values()) == {1}
    assert OutboxEvent.objects.filter(status="delivered", attempts=1).count() == 60


def test_the_worker_retries_through_an_outage_and_delivers_each_event_once(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(BREAKER_FAIL_MAX=1000)
    memory_on.set_fault("error", status=503, paths=["/v1/events"])
    for index in range(5):
        run_turn(conversation=conversation, text=f"remember outage fact {index}")
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}
    env = worker_env(
        memory_on, OUTBOX_BASE_DELAY="0.1", OUTBOX_MAX_DELAY="0.3", OUTBOX_POLL_INTERVAL="0.1"
    )

    worker = start_worker(memory_on, env=env)
    try:
        wait_until_listening(worker)
        deadline = time.monotonic() + 30
        while event_posts(memory_on) < 15 and time.monotonic() < deadline:
            time.sleep(0.05)  # each event is tried, and tried again
        memory_on.reset()
        while set(memory_on.state.events) != committed and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        output = stop(worker)

    assert set(memory_on.state.events) == committed, output
    assert len(memory_on.state.souls["pippa"].memories) == 5
    assert OutboxEvent.objects.filter(status="delivered").count() == 5
    assert min(OutboxEvent.objects.values_list("attempts", flat=True)) >= 2
