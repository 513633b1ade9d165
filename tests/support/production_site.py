"""The site as ``make run`` and the production profile serve it (the ``Procfile``'s web command,
gunicorn with gthread workers) on a test's database, for the tests that load it, crash it or stop
it: how to start it, a household whose members' sessions it takes, signed calls to its brain door,
and its workers' process ids."""

import base64
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.test import override_settings
from standardwebhooks import Webhook

from tests.support.live_servers import (
    ROOT,
    database_url,
    free_port,
    running_server_process,
    server_environment,
)
from webui.models import Conversation, Soul, Vessel

#: The server's signing key: the sessions the tests make are signed with it too.
SERVER_SECRET_KEY = "streams-under-load-" + "k" * 48
#: The brain door's secret when a test opens it (``PIPPA_MEMORY_BRAIN_SECRET``).
DOOR_SECRET = "whsec_" + base64.b64encode(b"d" * 32).decode()


def procfile_web_command() -> str:
    """The ``web:`` line of the Procfile, as supervisord runs it for ``make run``."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise AssertionError("The Procfile has no web process")


@contextmanager
def production_server(
    tmp_path: Path, *, collect_static: bool = True, **settings: str
) -> Iterator[tuple[str, "subprocess.Popen[str]"]]:
    """The Procfile's web command under the production profile, on this test's database, with
    ``settings`` added to its environment (and its static files collected first, unless told);
    its URL and its (gunicorn master's) process."""
    port = free_port()
    env = server_environment(
        DJANGO_SETTINGS_MODULE="pippa_site.settings_production",
        DJANGO_SECRET_KEY=SERVER_SECRET_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_LOG_LEVEL="ERROR",
        DATABASE_URL=database_url(),
        WEBUI_ADDR=f"127.0.0.1:{port}",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        **settings,
    )
    if collect_static:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
    command = ["sh", "-c", "exec " + procfile_web_command()]
    with (
        (tmp_path / "gunicorn.log").open("w") as log,
        running_server_process(command, port=port, env=env, log=log) as started,
    ):
        yield started


def worker_pids(master: int) -> list[int]:
    """The process ids of the gunicorn ``master``'s workers."""
    found = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def member_headers(user: Any) -> dict[str, str]:
    """Headers that send a session made in the database for ``user`` (the production cookies are
    Secure, so they are sent by hand over loopback HTTP), with a CSRF token."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    with override_settings(SECRET_KEY=SERVER_SECRET_KEY):  # the server's key signs the session
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
    csrf = uuid.uuid4().hex
    return {
        "Cookie": f"sessionid={session.session_key}; csrftoken={csrf}",
        "X-CSRFToken": csrf,
        "Accept": "text/event-stream",
    }


def household(conversations_per_member: list[int]) -> list[tuple[dict[str, str], list[str]]]:
    """Members with their headers and the ids of their conversations (with the offline vessel,
    on the demo soul)."""
    from django.contrib.auth import get_user_model

    soul = Soul.objects.create(
        slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa")
    )
    vessel = Vessel.objects.create(slug="offline", name="Offline", adapter="offline")
    found = []
    for index, count in enumerate(conversations_per_member):
        user = get_user_model().objects.create(username=f"member{index}")
        ids = [
            str(Conversation.objects.create(soul=soul, vessel=vessel, viewer=user).pk)
            for _ in range(count)
        ]
        found.append((member_headers(user), ids))
    return found


def brain_vessel(slug: str, port: int, model: str = "local") -> Vessel:
    """An OpenAI-compatible vessel on the provider at loopback ``port``, the first the brain door
    asks."""
    return Vessel.objects.create(
        slug=slug,
        name=slug.title(),
        adapter="openai_compatible",
        model=model,
        base_url=f"http://127.0.0.1:{port}/v1",
        brain_priority=1,
    )


def door_headers(raw: str, secret: str = DOOR_SECRET, webhook_id: str = "") -> dict[str, str]:
    """The headers of a brain-door call with body ``raw``, signed now with ``secret`` as the
    door checks (a new ``webhook-id`` unless given)."""
    webhook_id, now = webhook_id or f"msg_{uuid.uuid4().hex}", datetime.now(UTC)
    return {
        "Content-Type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(webhook_id, now, raw),
    }
