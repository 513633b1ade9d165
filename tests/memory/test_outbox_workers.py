"""Delivery through real task workers: a worker killed with SIGKILL mid-delivery loses nothing and
leaves no task row RUNNING for ever, and the same task runs unchanged on the django-tasks RQ
backend with Redis."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from pippa_memory.models import OutboxEvent
from pippa_memory.outbox import sweep_outbox
from pippa_memory.reference_engine import ReferenceEngine
from pippa_memory.tasks import deliver_turn_event_task
from webui.models import Conversation
from webui.turns import run_turn

from .conftest import TOKEN

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The URL of the test database this test is using, for worker processes."""
    config = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{config['NAME']}"
    host = config["HOST"] or "127.0.0.1"
    return f"postgres://{config['USER']}@{host}:{config['PORT'] or 5432}/{config['NAME']}"


def worker_env(engine: ReferenceEngine) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPPA_", "DJANGO_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="webui.settings",
        DATABASE_URL=database_url(),
        PIPPA_MEMORY_URL=engine.url,
        PIPPA_MEMORY_TOKEN=TOKEN,
        PIPPA_MEMORY_OUTBOX_DELIVERY_TIMEOUT="2",
        PIPPA_MEMORY_OUTBOX_LEASE_MARGIN="0.5",
        PIPPA_MEMORY_BREAKER_FAIL_MAX="1000",
    )
    return env


def start_worker(engine: ReferenceEngine, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--queue-name",
            "*",
            "--interval",
            "0.1",
            "--no-startup-delay",
            "--no-reload",
            *extra,
        ],
        cwd=ROOT,
        env=worker_env(engine),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


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
        for _ in range(300):
            if event_posts(memory_on):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the worker never started a delivery: " + (worker.stdout.read() or ""))
        os.kill(worker.pid, signal.SIGKILL)  # mid-delivery: the engine is still "thinking"
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    memory_on.reset()

    time.sleep(2.6)  # the killed attempt's lease runs out
    sweep_outbox()
    drain = start_worker(memory_on, "--batch")
    output, _ = drain.communicate(timeout=120)

    assert drain.returncode == 0, output
    assert set(memory_on.state.events) == committed
    assert OutboxEvent.objects.filter(status="delivered").count() == 12
    assert len(memory_on.state.souls["pippa"].memories) == 12
    # The killed worker's task row was reconciled by the sweep, not left RUNNING for ever.
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()
    (lost,) = DBTaskResult.objects.filter(exception_class_path="pippa_memory.outbox.WorkerLost")
    assert lost.status == "FAILED"
    assert lost.finished_at is not None


def test_the_sweep_fails_a_task_row_left_running_past_its_lease_and_enqueues_its_event_again(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(OUTBOX_DELIVERY_TIMEOUT=2.0, OUTBOX_LEASE_MARGIN=0.5)
    run_turn(conversation=conversation, text="remember the killed fact")
    event = OutboxEvent.objects.get()
    (abandoned,) = DBTaskResult.objects.all()
    # What a worker killed mid-delivery leaves: its row RUNNING, the event's lease running out.
    long_ago = timezone.now() - timedelta(seconds=60)
    DBTaskResult.objects.filter(pk=abandoned.pk).update(status="RUNNING", started_at=long_ago)
    OutboxEvent.objects.filter(pk=event.pk).update(next_attempt_at=long_ago)
    alive = deliver_turn_event_task.enqueue(str(event.id))
    DBTaskResult.objects.filter(pk=alive.id).update(status="RUNNING", started_at=timezone.now())

    assert sweep_outbox() == 1

    abandoned.refresh_from_db()
    assert abandoned.status == "FAILED"
    assert abandoned.exception_class_path == "pippa_memory.outbox.WorkerLost"
    assert "killed or crashed" in abandoned.traceback
    assert DBTaskResult.objects.get(pk=alive.id).status == "RUNNING"  # within its lease: alive
    (again,) = DBTaskResult.objects.filter(status="READY")
    assert again.args_kwargs["args"] == [str(event.id)]


@pytest.fixture
def rq_backend(settings: Any) -> Any:
    """Tasks on the django-tasks RQ backend, on the Redis at 127.0.0.1:6379, with an empty queue."""
    import django_rq
    from django_tasks_rq.backend import Job
    from redis.exceptions import ConnectionError as RedisDown

    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    queue = django_rq.get_queue("default", job_class=Job)
    try:
        queue.empty()
    except RedisDown:
        if os.environ.get("CI") == "true":
            pytest.fail("Redis must run on 127.0.0.1:6379 in CI for the RQ backend tests")
        pytest.skip("no Redis on 127.0.0.1:6379")
    yield queue
    queue.empty()


def run_rq_worker(queue: Any) -> None:
    from django_tasks_rq.backend import Job
    from rq import SimpleWorker

    # What `manage.py rqworker default` runs, in this process (SimpleWorker does not fork).
    SimpleWorker([queue], connection=queue.connection, job_class=Job).work(burst=True)


@pytest.mark.xdist_group("redis")  # one shared Redis queue: these tests run on one xdist worker
def test_delivery_runs_unchanged_on_the_rq_backend(
    memory_on: ReferenceEngine, rq_backend: Any, conversation: Conversation
) -> None:
    for index in range(5):
        run_turn(conversation=conversation, text=f"remember rq fact {index}")
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}
    assert rq_backend.count == 5  # enqueued on commit, in Redis

    run_rq_worker(rq_backend)

    assert set(memory_on.state.events) == committed
    assert OutboxEvent.objects.filter(status="delivered").count() == 5


@pytest.mark.xdist_group("redis")
def test_on_rq_an_engine_outage_is_swept_and_delivered_when_it_is_back(
    memory_on: ReferenceEngine, configure: Any, rq_backend: Any, conversation: Conversation
) -> None:
    configure(BREAKER_FAIL_MAX=1000)
    memory_on.set_fault("error", status=503)
    for index in range(3):
        run_turn(conversation=conversation, text=f"remember outage fact {index}")
    committed = {str(i) for i in OutboxEvent.objects.values_list("id", flat=True)}

    run_rq_worker(rq_backend)
    assert OutboxEvent.objects.filter(status="pending", attempts=1).count() == 3

    memory_on.reset()
    OutboxEvent.objects.update(next_attempt_at=OutboxEvent.objects.first().created_at)
    assert sweep_outbox() == 3
    run_rq_worker(rq_backend)

    assert set(memory_on.state.events) == committed
    assert OutboxEvent.objects.filter(status="delivered").count() == 3
