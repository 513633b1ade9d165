"""A brain-door call whose web worker is killed mid-run is answered on replay within a minute,
under the Procfile's own gunicorn: the call's hold on its ``webhook-id`` is a lease that lapses,
not a ``running`` row that answers 409 for ever."""

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest
import requests

from pippa_memory.models import BrainCall
from tests.support.brain_door import DECIDE
from tests.support.live_servers import ROOT
from tests.support.production_site import brain_vessel, door_headers, worker_pids
from tests.support.silent_provider import SilentProvider
from webui.models import Soul, Vessel

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # One at a time: each starts the production gunicorn, and beside the load test on PostgreSQL
    # another would share its hundred connections.
    pytest.mark.xdist_group("production_server"),
]


def test_a_brain_call_killed_mid_run_is_answered_on_replay_within_a_minute(
    brain_door_gunicorn: tuple[str, subprocess.Popen[str]], silent_provider: SilentProvider
) -> None:
    url, server = brain_door_gunicorn
    Soul.objects.create(slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa"))
    stuck = brain_vessel("stuck", silent_provider.port)
    raw = json.dumps({"role": "decide", "soul": "pippa", "input": DECIDE})
    webhook_id = f"msg_{uuid.uuid4().hex}"

    def first_call() -> None:
        with contextlib.suppress(requests.RequestException):  # its worker is killed under it
            requests.post(
                f"{url}/api/memory/brain/",
                data=raw,
                headers=door_headers(raw, webhook_id=webhook_id),
            )

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
                f"{url}/api/memory/brain/",
                data=raw,
                headers=door_headers(raw, webhook_id=webhook_id),
                timeout=10,
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
