"""Under load, through gunicorn: 50 chat turns sent at once (50 members, each in their own
conversation) while the engine flaps between up and down are all answered, and the delivery
worker, running beside them, gets every turn event to the engine exactly once in effect; a bounded
load on the brain door gets no server error."""

import base64
import json
import threading
import time
from collections.abc import Iterator

import pytest
import requests
from django.contrib.auth import get_user_model

from pippa_memory.models import OutboxEvent
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from tests.support.live_servers import (
    free_port,
    gunicorn_on_this_database,
)
from tests.support.outbox_workers import start_worker, stop, worker_env
from tests.support.production_site import door_headers
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "whsec_" + base64.b64encode(b"reliability-brain-secret-0123456").decode()
PASSWORD = "load-test-password-42"


@pytest.fixture
def wake_address() -> str:
    """Where this test's web server rings this test's delivery worker."""
    return f"127.0.0.1:{free_port()}"


@pytest.fixture
def gunicorn(engine: ReferenceEngine, wake_address: str) -> Iterator[str]:
    """The WSGI app under gunicorn with three workers, on this test's database."""
    with gunicorn_on_this_database(
        3,
        PIPPA_MEMORY_URL=engine.url,
        PIPPA_MEMORY_TOKEN=TOKEN,
        PIPPA_MEMORY_CHAT_BUDGET="0.3",
        PIPPA_MEMORY_BREAKER_RESET_TIMEOUT="0.2",
        PIPPA_MEMORY_BRAIN_SECRET=SECRET,
        PIPPA_MEMORY_BRAIN_RATE="100000/min",
        PIPPA_MEMORY_OUTBOX_WAKE_ADDRESS=wake_address,
    ) as url:
        yield url


@pytest.fixture
def household(db: None) -> None:
    Soul.objects.create(slug="pippa", name="Pippa", vault_path="demo/vaults/pippa")
    Vessel.objects.create(slug="offline", name="Offline", adapter="offline", brain_priority=1)
    get_user_model().objects.create_user(username="member", password=PASSWORD)


def logged_in(url: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{url}/accounts/login/", timeout=10)
    session.post(
        f"{url}/accounts/login/",
        data={
            "username": "member",
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        timeout=10,
    )
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session


def test_50_concurrent_turns_while_the_engine_flaps(
    gunicorn: str, memory_on: ReferenceEngine, household: None, wake_address: str
) -> None:
    engine = memory_on  # the gunicorn workers' engine, and the delivery worker's
    worker = start_worker(
        engine,
        env=worker_env(
            engine,
            OUTBOX_WAKE_ADDRESS=wake_address,
            OUTBOX_BASE_DELAY="0.1",
            OUTBOX_MAX_DELAY="0.5",
            OUTBOX_POLL_INTERVAL="0.2",
        ),
    )
    stop_flapping = threading.Event()

    def flap() -> None:
        while not stop_flapping.is_set():
            engine.set_fault("down")
            stop_flapping.wait(0.07)
            engine.reset()
            stop_flapping.wait(0.05)

    # Each member logs in and opens a conversation, then all 50 send their turn at once.
    members = 50
    ready = threading.Barrier(members, timeout=60)
    statuses: list[int] = []
    failures: list[str] = []
    lock = threading.Lock()

    def member(index: int) -> None:
        try:
            status = talk(index)
        except Exception as exc:  # reported below, not lost in the thread
            ready.abort()  # the others stop waiting for a member who will never come
            with lock:
                failures.append(repr(exc))
            return
        with lock:
            statuses.append(status)

    def talk(index: int) -> int:
        session = logged_in(gunicorn)
        response = session.post(
            f"{gunicorn}/api/conversations/",
            json={"soul": "pippa", "vessel": "offline"},
            timeout=30,
        )
        assert response.status_code == 201, response.text[:300]
        created = response.json()
        ready.wait()
        return session.post(
            f"{gunicorn}/api/conversations/{created['id']}/messages/",
            json={"text": f"remember fact {index}"},
            timeout=60,
        ).status_code

    flapper = threading.Thread(target=flap)
    flapper.start()
    threads = [threading.Thread(target=member, args=(i,)) for i in range(members)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    stop_flapping.set()
    flapper.join()
    engine.reset()
    deadline = time.monotonic() + 60  # the engine is up now: the worker retries what is left
    while OutboxEvent.objects.exclude(status="delivered").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    output = stop(worker)

    assert failures == []
    assert statuses == [201] * members
    events = OutboxEvent.objects.all()
    assert events.count() == members
    assert OutboxEvent.objects.filter(status="delivered").count() == members, output
    assert set(engine.state.events) == {str(i) for i in events.values_list("id", flat=True)}
    remembered = sorted(m.text for m in engine.state.souls["pippa"].memories)
    assert remembered == sorted(f"fact {i}" for i in range(members))


def test_a_bounded_load_on_the_brain_door_gets_no_server_error(
    gunicorn: str, household: None
) -> None:
    body = json.dumps(
        {"role": "decide", "soul": "pippa", "input": {"question": "Tea?", "options": ["yes", "no"]}}
    )
    statuses: list[int] = []
    lock = threading.Lock()

    def caller() -> None:
        session = requests.Session()
        for _ in range(20):
            headers = door_headers(body, SECRET)
            status = session.post(
                f"{gunicorn}/api/memory/brain/", data=body, headers=headers, timeout=30
            ).status_code
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert len(statuses) == 160
    assert statuses == [200] * 160
