"""The plug-in's outbox worker (``manage.py memory_outbox deliver``) in a process of its own, on
the test's own database: started, waited for, and stopped as honcho stops it."""

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from tests.support.live_servers import database_url, free_port

ROOT = Path(__file__).resolve().parents[2]


def worker_env(engine: ReferenceEngine, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPPA_", "DJANGO_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="pippa_site.settings",
        DATABASE_URL=database_url(),
        PIPPA_MEMORY_URL=engine.url,
        PIPPA_MEMORY_TOKEN=TOKEN,
        PIPPA_MEMORY_OUTBOX_DELIVERY_TIMEOUT="2",
        PIPPA_MEMORY_OUTBOX_LEASE_MARGIN="0.5",
        PIPPA_MEMORY_BREAKER_FAIL_MAX="1000",
        # Each test's worker hears rings on a port of its own.
        PIPPA_MEMORY_OUTBOX_WAKE_ADDRESS=f"127.0.0.1:{free_port()}",
    )
    env.update({f"PIPPA_MEMORY_{k}": v for k, v in settings.items()})
    return env


def start_worker(
    engine: ReferenceEngine, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", "memory_outbox", "deliver", *extra],
        cwd=ROOT,
        env=env or worker_env(engine),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_until_listening(worker: subprocess.Popen[str], *, timeout: float = 60.0) -> str:
    """The worker's first line, once it says it runs (and hears rings); fails the test if not."""
    ready, _, _ = select.select([worker.stdout], [], [], timeout)
    line = worker.stdout.readline() if ready else ""
    if "woken by" not in line:
        worker.kill()
        pytest.fail(f"the worker did not start listening for rings: {line}{worker.stdout.read()}")
    return line


def finish(worker: subprocess.Popen[str]) -> str:
    """Wait for a draining worker to end by itself, and return what it printed."""
    output, _ = worker.communicate(timeout=120)
    return output


def stop(worker: subprocess.Popen[str]) -> str:
    """Stop a worker the way honcho does (SIGTERM) and return what it printed."""
    if worker.poll() is None:
        worker.terminate()
    output, _ = worker.communicate(timeout=60)
    return output
