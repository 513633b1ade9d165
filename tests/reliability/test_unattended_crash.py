"""An unattended run is held by a lease, as a turn is: while the scheduler runs it, it stays
"running" past a whole lease (its heartbeat renews it), and once the scheduler is SIGKILLed
mid-run, the run is marked interrupted and the Soul Stream says so within a minute, instead of
"Pippa is writing…" for ever. The scheduler is ``manage.py run_scheduler`` in its own process,
its vessel a provider that accepts the call and never answers, all with the default lease."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from tests.support.live_servers import ROOT, database_url, server_environment
from webui.conf import DEFAULTS
from webui.models import ScheduledJob, Soul, UnattendedRun, Vessel

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("production_server")]

LEASE = DEFAULTS["TURN_LEASE_SECONDS"]


@pytest.fixture
def silent_provider() -> Iterator[str]:
    """A loopback address that takes connections (into its backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def soul_stream(member: Any) -> str:
    page = Client()
    page.force_login(member)
    return page.get("/stream/").content.decode()


def test_a_killed_schedulers_run_is_marked_interrupted_within_a_minute(
    silent_provider: str, soul: Soul, user: Any
) -> None:
    vessel = Vessel.objects.create(
        slug="silent",
        name="Silent",
        adapter=Vessel.Adapter.OLLAMA,
        model="llama3",
        base_url=silent_provider,
        read_timeout=300,
        deadline=300,
        max_retries=0,
    )
    ScheduledJob.objects.create(
        name="Morning note", soul=soul, vessel=vessel, prompt="Say hello.", schedule="every 1d"
    )
    env = server_environment(
        DJANGO_SETTINGS_MODULE="pippa_site.settings",
        DATABASE_URL=database_url(),
        PIPPA_MEMORY_ENABLED="false",
    )
    scheduler = subprocess.Popen(
        [sys.executable, "manage.py", "run_scheduler", "--every", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not UnattendedRun.objects.exists():
            assert time.monotonic() < deadline, "the scheduler never started the job"
            time.sleep(0.2)
        time.sleep(LEASE + 3)  # past a whole lease: only the heartbeat keeps it running
        run = UnattendedRun.objects.get()
        assert run.outcome == "running", run.error
        assert "Pippa is writing" in soul_stream(user)
        os.kill(scheduler.pid, signal.SIGKILL)
        killed = time.monotonic()
        scheduler.wait(timeout=10)
    finally:
        if scheduler.poll() is None:
            scheduler.kill()

    while "Pippa is writing" in (page := soul_stream(user)):
        assert time.monotonic() - killed < 60, "still 'writing' a minute after the kill"
        time.sleep(1)
    run.refresh_from_db()
    assert run.outcome == "interrupted"
    assert run.finished_at is not None
    assert "before it finished" in run.error
    assert "Pippa started writing" in page
    assert "but was interrupted" in page
