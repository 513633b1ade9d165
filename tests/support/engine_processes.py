"""The engine as the Procfile runs it (``python -m reference_engine``, gunicorn) in a process of
its own, in a session of its own so a test can SIGKILL the whole of it at once."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.engine_token import TOKEN
from tests.support.live_servers import free_port, server_environment

ROOT = Path(__file__).resolve().parents[2]


ENTRY = (sys.executable, "-m", "reference_engine")
ALIAS = (sys.executable, "manage.py", "memory_engine")


def start_engine(
    database: str,
    port: int,
    *extra: str,
    stderr: Any = subprocess.DEVNULL,
    alias: bool = False,
) -> subprocess.Popen[str]:
    """The engine as the Procfile starts it (with ``alias``: as ``manage.py memory_engine``)."""
    command = [
        *(ALIAS if alias else ENTRY),
        *("--port", str(port), "--token", TOKEN, "--database", database, *extra),
    ]
    env = server_environment(DJANGO_SETTINGS_MODULE="tests.settings")
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )


def wait_until_answering(process: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{url}/v1/souls/pippa/head", timeout=2)
            return
        except requests.RequestException:
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("python -m reference_engine did not start answering within 60 s")
            time.sleep(0.1)


def kill(process: subprocess.Popen[str]) -> None:
    """SIGKILL the engine and its gunicorn worker: nothing gets to clean up."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


@contextmanager
def engine_process(
    database: str, *extra: str, port: int = 0, alias: bool = False
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``python -m reference_engine`` on ``database`` until the block ends (then SIGKILLed)."""
    port = port or free_port()
    process = start_engine(database, port, *extra, alias=alias)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(process, url)
        yield url, process
    finally:
        kill(process)
