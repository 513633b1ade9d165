"""The server as ``make run`` and the production profile start it (the ``Procfile``'s web command,
gunicorn with gthread workers) keeps answering pages while 16 streamed replies are being written."""

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.live_servers import ROOT, free_port, running_server, server_environment
from tests.memory.test_outbox_workers import database_url
from webui.models import Conversation, Message, Soul, Vessel

pytestmark = pytest.mark.django_db(transaction=True)


STREAMS = 16
PASSWORD = "streams-under-load-password-42"
# 25 pieces at half a second each: every stream stays open for about twelve seconds.
TEXT = " ".join(f"piece{n}" for n in range(22))
PACE_SECONDS = "0.5"


def procfile_web_command() -> str:
    """The ``web:`` line of the Procfile, as honcho runs it for ``make run``."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise AssertionError("The Procfile has no web process")


@pytest.fixture
def production_server(tmp_path: Path) -> Iterator[str]:
    """The Procfile's web command under the production profile, on this test's database."""
    port = free_port()
    env = server_environment(
        DJANGO_SETTINGS_MODULE="webui.settings_production",
        DJANGO_SECRET_KEY="streams-under-load-" + "k" * 48,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_LOG_LEVEL="ERROR",
        DATABASE_URL=database_url(),
        PIPPA_MEMORY_ENABLED="false",
        WEBUI_OFFLINE_PACE_SECONDS=PACE_SECONDS,
        WEBUI_ADDR=f"127.0.0.1:{port}",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    command = ["sh", "-c", "exec " + procfile_web_command()]
    with (
        (tmp_path / "gunicorn.log").open("w") as log,
        running_server(command, port=port, env=env, log=log) as url,
    ):
        yield url


def log_in(url: str) -> dict[str, str]:
    """Log in through the form; the production cookies are Secure, so they are sent by hand."""
    form = requests.get(f"{url}/accounts/login/", timeout=10)
    csrf = form.cookies["csrftoken"]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    answer = requests.post(
        f"{url}/accounts/login/",
        data={"username": "member", "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Cookie": f"csrftoken={csrf}"},
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 302, answer.text[:500]
    return {
        "Cookie": f"csrftoken={csrf}; sessionid={answer.cookies['sessionid']}",
        "X-CSRFToken": csrf,
        "Accept": "text/event-stream",
    }


@pytest.fixture
def conversations(db: None) -> list[Conversation]:
    soul = Soul.objects.create(
        slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa")
    )
    vessel = Vessel.objects.create(slug="offline", name="Offline", adapter="offline")
    # Hashed as the production profile checks passwords (the suite's own settings use MD5).
    hasher = PBKDF2PasswordHasher()
    member = get_user_model().objects.create(
        username="member", password=hasher.encode(PASSWORD, hasher.salt())
    )
    return [
        Conversation.objects.create(soul=soul, vessel=vessel, viewer=member) for _ in range(STREAMS)
    ]


class HeldStream(threading.Thread):
    """One streamed reply, read to its end; ``writing`` is set at its first delta."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.headers = url, headers
        self.writing, self.done = threading.Event(), threading.Event()
        self.failure: Any = None

    def run(self) -> None:
        try:
            with requests.post(
                self.url, json={"text": TEXT}, headers=self.headers, stream=True, timeout=120
            ) as response:
                for line in response.iter_lines(decode_unicode=True):
                    if line == "event: delta":
                        self.writing.set()
                    elif line == "event: done":
                        self.done.set()
        except Exception as exc:  # reported by the test, not lost in this thread
            self.failure = exc


def test_a_plain_page_answers_while_sixteen_streams_are_open(
    production_server: str, conversations: list[Conversation]
) -> None:
    headers = log_in(production_server)
    streams = [
        HeldStream(f"{production_server}/api/conversations/{c.pk}/messages/", headers)
        for c in conversations
    ]
    for stream in streams:
        stream.start()
    for stream in streams:
        assert stream.writing.wait(timeout=90), f"a stream never started: {stream.failure!r}"

    page = requests.get(f"{production_server}/accounts/login/", timeout=30)
    still_open = sum(not stream.done.is_set() for stream in streams)

    assert page.status_code == 200
    assert "Log in" in page.text
    assert still_open == STREAMS
    for stream in streams:
        stream.join(timeout=120)
        assert stream.done.is_set(), f"a stream did not finish: {stream.failure!r}"
    assert Message.objects.filter(role="assistant").count() == STREAMS
