"""The real web server in its own processes, for the tests that load it over loopback.

One way to start it on a free port, wait until it answers, and stop it, shared by the load,
throttle and streaming tests (each chooses its command and settings).
"""

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
import requests
from django.core.signals import request_finished, request_started
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
#: The project's own variables are left out of the server's environment unless a test sets them.
OWN_PREFIXES = ("PIPPA_", "DJANGO_", "WEBUI_")


def free_port() -> int:
    """A loopback port nothing listens on now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


class RequestsInFlight:
    """The requests this process's live server is still handling, by the thread that serves each.

    A browser test can end while its page's last request (a turn's stream, a poll) is still being
    served; the test database is then flushed under a thread that is writing to it, which fails the
    flush (PostgreSQL) or the next test. :meth:`settle` waits for those requests to finish first.
    """

    def __init__(self) -> None:
        self.paths: dict[int, str] = {}
        self.lock = threading.Condition()

    def started(self, sender: object, environ: dict[str, str] | None = None, **_: object) -> None:
        with self.lock:
            self.paths[threading.get_ident()] = (environ or {}).get("PATH_INFO", "?")

    def finished(self, sender: object, **_: object) -> None:
        with self.lock:
            self.paths.pop(threading.get_ident(), None)
            self.lock.notify_all()

    @contextmanager
    def watched(self) -> Iterator["RequestsInFlight"]:
        request_started.connect(self.started, dispatch_uid=id(self))
        request_finished.connect(self.finished, dispatch_uid=id(self))
        try:
            yield self
        finally:
            request_started.disconnect(dispatch_uid=id(self))
            request_finished.disconnect(dispatch_uid=id(self))

    def settle(self, timeout: float) -> None:
        """Return once no request is being served; fail, naming them, if some outlive ``timeout``."""
        with self.lock:
            if not self.lock.wait_for(lambda: not self.paths, timeout=timeout):
                pytest.fail(f"The live server was still serving {sorted(self.paths.values())}")


def server_environment(**settings: str) -> dict[str, str]:
    """This process's environment without the project's own variables, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_PREFIXES)}
    env.update(settings)
    return env


@contextmanager
def running_server(
    command: Sequence[str], *, port: int, env: dict[str, str], log: IO[str] | None = None
) -> Iterator[str]:
    """Run ``command`` (a server listening on ``port``) until the block ends; its base URL once
    ``/accounts/login/`` answers. Fails the test if it has not answered within 60 s."""
    with running_server_process(command, port=port, env=env, log=log) as (url, _server):
        yield url


@contextmanager
def running_server_process(
    command: Sequence[str], *, port: int, env: dict[str, str], log: IO[str] | None = None
) -> Iterator[tuple[str, "subprocess.Popen[str]"]]:
    """:func:`running_server`, with the server's process too (to signal it)."""
    output = log if log is not None else subprocess.DEVNULL
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60  # workers boot slowly while the rest of the suite runs
        while True:
            try:
                requests.get(f"{url}/accounts/login/", timeout=5)
                break
            except requests.RequestException:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"{command[0]} did not start answering within 60 s")
                time.sleep(0.2)
        yield url, server
    finally:
        if server.poll() is None:
            server.terminate()
        server.wait(timeout=60)


def database_url() -> str:
    """The URL of the test database this test is using, for server and worker processes."""
    config = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{config['NAME']}"
    host = config["HOST"] or "127.0.0.1"
    return f"postgres://{config['USER']}@{host}:{config['PORT'] or 5432}/{config['NAME']}"


@contextmanager
def gunicorn_on_this_database(workers: int, **settings: str) -> Iterator[str]:
    """The WSGI app under gunicorn with ``workers`` worker processes, on this test's database
    with the suite's own settings (its password hasher among them) and ``settings``; its URL."""
    port = free_port()
    env = server_environment(
        DJANGO_SETTINGS_MODULE="tests.settings",
        DATABASE_URL=database_url(),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_LOG_LEVEL="ERROR",
        **settings,
    )
    command = [sys.executable, "-m", "gunicorn", "pippa_site.wsgi", "-w", str(workers)]
    with running_server([*command, "-b", f"127.0.0.1:{port}"], port=port, env=env) as url:
        yield url
