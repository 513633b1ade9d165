"""A reply whose web workers are killed mid-stream, under the Procfile's own gunicorn, leaves
nothing stuck: within 30 s Stop says nothing was running, the conversation takes a new message,
and what had arrived before the crash is kept as the reply, marked interrupted."""

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.production_site import household, production_server, worker_pids
from webui.models import Conversation, Message

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # One at a time: each starts the production gunicorn, and beside the load test on PostgreSQL
    # another would share its hundred connections.
    pytest.mark.xdist_group("production_server"),
]

# Sixty words at half a second a piece: the reply would take half a minute to write.
TEXT = " ".join(f"word{n}" for n in range(60))


@pytest.fixture
def paced_gunicorn(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The Procfile's web command under the production profile, the offline vessel paced."""
    settings = {"PIPPA_MEMORY_ENABLED": "false", "WEBUI_OFFLINE_PACE_SECONDS": "0.5"}
    with production_server(tmp_path, **settings) as started:
        yield started


class StreamedReply(threading.Thread):
    """One streamed reply, read until its connection breaks: its turn id and the text shown."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers
        self.turn_id: str | None = None
        self.pieces: list[str] = []
        self.status: int | None = None
        self.events: list[str] = []

    def run(self) -> None:
        try:
            with requests.post(
                self.url, json={"text": TEXT}, headers=self.headers, stream=True, timeout=60
            ) as response:
                self.status = response.status_code
                name = None
                for line in response.iter_lines(decode_unicode=True):
                    if line.startswith("event: "):
                        name = line.removeprefix("event: ")
                        self.events.append(name)
                    elif line.startswith("data: ") and name in ("turn", "delta"):
                        data = json.loads(line.removeprefix("data: "))
                        if name == "turn":
                            self.turn_id = data["turn_id"]
                        else:
                            self.pieces.append(data["text"])
        except requests.RequestException:
            pass  # the worker writing it is killed


def test_a_reply_whose_workers_are_killed_frees_its_conversation_and_is_kept_interrupted(
    paced_gunicorn: tuple[str, subprocess.Popen[str]],
) -> None:
    url, server = paced_gunicorn
    [(headers, [conversation_id])] = household([1])
    conversation = Conversation.objects.get(pk=conversation_id)
    base = f"{url}/api/conversations/{conversation.pk}"
    reply = StreamedReply(f"{base}/messages/", headers)
    reply.start()
    deadline = time.monotonic() + 60
    while len(reply.pieces) < 16:  # eight seconds of text: the heartbeat wrote some of it
        assert time.monotonic() < deadline, (
            "the reply never got going",
            reply.status,
            reply.events,
        )
        time.sleep(0.1)

    for pid in worker_pids(server.pid):
        os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    reply.join(30)
    shown = "".join(reply.pieces)

    json_headers = {**headers, "Accept": "application/json"}
    stops = []
    while time.monotonic() - killed_at < 30:
        try:
            # A new worker's first request loads the site, slow on a busy machine: a stop timed
            # out here could have freed the turn unseen, so it is waited for.
            stop = requests.post(
                f"{base}/stop/", json={"turn_id": reply.turn_id}, headers=json_headers, timeout=30
            )
        except requests.ConnectionError:
            time.sleep(0.5)  # gunicorn is starting new workers
            continue
        stops.append((stop.status_code, stop.text[:300]))
        if stop.status_code != 202:  # 202 only while the lease of the dead turn still runs
            break
        time.sleep(1)
    rows = list(Message.objects.filter(conversation=conversation).values("role", "stopped"))
    assert stop.status_code == 409, stops
    assert stop.json()["error"]["code"] == "turn_not_running", (stops, rows, reply.turn_id)
    again = requests.post(
        f"{base}/messages/", json={"text": "are you there?"}, headers=json_headers, timeout=30
    )
    assert again.status_code == 201, again.text
    assert time.monotonic() - killed_at < 30

    first = Message.objects.get(conversation=conversation, content=TEXT)
    kept = Message.objects.get(reply_to=first)
    assert kept.interrupted
    assert kept.content
    assert shown.startswith(kept.content)
