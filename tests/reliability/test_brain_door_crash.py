"""A brain-door call whose web worker is killed mid-run is answered on replay within a minute,
under the Procfile's own gunicorn: the call's hold on its ``webhook-id`` is a lease that lapses,
not a ``running`` row that answers 409 for ever."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from standardwebhooks import Webhook

from pippa_memory.models import BrainCall
from tests.reliability.test_streams_under_load import procfile_web_command
from tests.support.brain_door import DECIDE, NEW_SECRET
from tests.support.live_servers import ROOT, database_url, free_port, server_environment
from webui.models import Soul, Vessel

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # One at a time: each starts the production gunicorn, and beside the load test on PostgreSQL
    # another would share its hundred connections.
    pytest.mark.xdist_group("production_server"),
]


class SilentProvider(threading.Thread):
    """A provider on loopback that accepts a call and never answers it."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.called = threading.Event()
        self.held: list[socket.socket] = []

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(client)
            self.called.set()

    def close(self) -> None:
        self.listener.close()
        for client in self.held:
            client.close()


@pytest.fixture
def silent_provider() -> Iterator[SilentProvider]:
    provider = SilentProvider()
    provider.start()
    yield provider
    provider.close()


def worker_pids(master: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The Procfile's web command under the production profile, with the brain door open."""
    port = free_port()
    env = server_environment(
        DJANGO_SETTINGS_MODULE="pippa_site.settings_production",
        DJANGO_SECRET_KEY="brain-door-crash-" + "k" * 48,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_LOG_LEVEL="ERROR",
        DATABASE_URL=database_url(),
        PIPPA_MEMORY_BRAIN_SECRET=NEW_SECRET,
        PIPPA_MEMORY_BRAIN_RATE="1000/min",
        WEBUI_ADDR=f"127.0.0.1:{port}",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    )
    command = ["sh", "-c", "exec " + procfile_web_command()]
    with (tmp_path / "gunicorn.log").open("w") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log, text=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    requests.get(f"{url}/accounts/login/", timeout=5)
                    break
                except requests.RequestException:
                    assert time.monotonic() < deadline, "gunicorn did not start within 60 s"
                    time.sleep(0.2)
            yield url, server
        finally:
            server.terminate()
            server.wait(timeout=60)


def signed(raw: bytes, webhook_id: str) -> dict[str, str]:
    now = datetime.now(tz=UTC)
    return {
        "Content-Type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(NEW_SECRET).sign(webhook_id, now, raw.decode()),
    }


def test_a_brain_call_killed_mid_run_is_answered_on_replay_within_a_minute(
    gunicorn: tuple[str, subprocess.Popen[str]], silent_provider: SilentProvider
) -> None:
    url, server = gunicorn
    Soul.objects.create(slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa"))
    stuck = Vessel.objects.create(
        slug="stuck",
        name="Stuck",
        adapter="openai_compatible",
        model="local",
        base_url=f"http://127.0.0.1:{silent_provider.port}/v1",
        brain_priority=1,
    )
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE}).encode()
    webhook_id = f"msg_{uuid.uuid4().hex}"

    def first_call() -> None:
        with contextlib.suppress(requests.RequestException):  # its worker is killed under it
            requests.post(f"{url}/api/memory/brain/", data=raw, headers=signed(raw, webhook_id))

    threading.Thread(target=first_call, daemon=True).start()
    assert silent_provider.called.wait(30), "the door never called the vessel"
    assert BrainCall.objects.get(webhook_id=webhook_id).outcome == BrainCall.Outcome.RUNNING

    for pid in worker_pids(server.pid):
        os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    # The household fixes its vessel meanwhile: the call, run again, can be answered.
    Vessel.objects.filter(pk=stuck.pk).update(brain_priority=None)
    Vessel.objects.create(slug="offline", name="Offline", adapter="offline", brain_priority=2)

    answers = []
    while time.monotonic() - killed_at < 60:
        try:
            replay = requests.post(
                f"{url}/api/memory/brain/", data=raw, headers=signed(raw, webhook_id), timeout=10
            )
        except requests.RequestException:
            time.sleep(0.5)  # gunicorn is starting new workers
            continue
        answers.append(replay.status_code)
        if replay.status_code == 200:
            break
        assert replay.status_code == 409, replay.text
        time.sleep(1)

    assert answers[-1] == 200, answers
    assert time.monotonic() - killed_at < 60
    row = BrainCall.objects.get(webhook_id=webhook_id)
    assert (row.outcome, row.vessel) == (BrainCall.Outcome.ANSWERED, "offline")
