"""The brain door under gunicorn with several workers and the offline vessel: requests per second
and p50/p99 latency at 1, 8 and 32 concurrent clients, errors counted, and the door's own overhead
(latency minus the vessel's time).

    .venv/bin/python bench/brain_door.py [--database sqlite|postgres] [--requests 320] [--workers 4]
"""

import base64
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime

from _processes import free_port
from _report import figure, none_wanted
from _setup import (
    ROOT,
    arguments,
    at_once,
    backend_name,
    household,
    median,
    percentile,
    setup_django,
)

SECRET = "whsec_" + base64.b64encode(b"bench-brain-door-secret-32-bytes").decode()
BODY = {
    "role": "decide",
    "soul": "pippa",
    "input": {"question": "Tea or coffee for the guests?", "options": ["tea", "coffee", "cocoa"]},
}


def signed(raw: bytes) -> dict[str, str]:
    from standardwebhooks import Webhook

    webhook_id, now = f"msg_{uuid.uuid4().hex}", datetime.now(UTC)
    return {
        "Content-Type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(webhook_id, now, raw.decode()),
    }


def vessel_seconds() -> float:
    """The offline vessel's own time for one decide, in-process."""
    from pippa_memory.brain.roles import ROLES
    from pippa_memory.brain.service import ask_vessel
    from webui.models import Soul, Vessel

    vessel, soul = Vessel.objects.get(slug="offline"), Soul.objects.get(slug="pippa")
    samples = []
    for _ in range(50):
        started = time.perf_counter()
        ask_vessel(vessel, ROLES["decide"], soul, BODY["input"], deadline_at=time.monotonic() + 60)
        samples.append(time.perf_counter() - started)
    return median(samples)


def load(url: str, clients: int, total: int) -> tuple[float, list[float], dict[int, int]]:
    import requests

    raw = json.dumps(BODY).encode()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    per_client = total // clients

    def client(_: int) -> None:
        session = requests.Session()
        for _ in range(per_client):
            started = time.perf_counter()
            try:
                status = session.post(url, data=raw, headers=signed(raw), timeout=30).status_code
            except requests.RequestException:
                status = 0
            with lock:
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1

    return at_once(client, range(clients)), latencies, statuses


def start_gunicorn(*, workers: int, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """gunicorn serving the site on a free loopback port with ``env``; the process and the brain
    door's URL."""
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "pippa_site.wsgi",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            **env,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        },
    )
    url = f"http://127.0.0.1:{port}/api/memory/brain/"
    return server, url


def wait_for_door(url: str, *, tries: int) -> None:
    """Return once the brain door at ``url`` answers at all, or after ``tries`` tries a tenth of
    a second apart (the bench then goes on, and its calls say what failed)."""
    import requests

    for _ in range(tries):
        try:
            requests.get(url, timeout=5)
            return
        except requests.RequestException:
            time.sleep(0.1)


def main() -> None:
    args = arguments(__doc__.splitlines()[0], requests=(320, 32), workers=(4, 2))
    env = {
        "PIPPA_MEMORY_BRAIN_SECRET": SECRET,
        "PIPPA_MEMORY_BRAIN_RATE": "1000000/min",
        "PIPPA_MEMORY_URL": "",
    }
    database = setup_django(database=args.database, label="brain", **env)
    household()
    own = vessel_seconds()
    server, url = start_gunicorn(workers=args.workers, env={**env, "DATABASE_URL": database})
    try:
        wait_for_door(url, tries=100)
        load(url, 4, 40)  # warm the workers
        backend = backend_name(args.database)
        for clients in (1, 8, 32):
            seconds, latencies, statuses = load(url, clients, args.requests)
            errors = sum(n for status, n in statuses.items() if status != 200)
            p50 = percentile(latencies, 0.5)
            figure(
                f"brain door, {clients} client{'s' if clients > 1 else ''}, {backend}",
                f"{len(latencies) / seconds:.1f} req/s, p50 {p50 * 1000:.1f} ms, p99 "
                f"{percentile(latencies, 0.99) * 1000:.1f} ms, {errors} errors; the door's own "
                f"share of p50 (p50 minus the vessel's {own * 1000:.2f} ms) {(p50 - own) * 1000:.1f} ms",
                **none_wanted(errors, "errors"),
                what=(
                    f"{len(latencies)} signed decide calls over loopback HTTP to gunicorn with "
                    f"{args.workers} workers, {clients} at once, offline vessel; the vessel's own "
                    "time is the in-process median of the same call"
                ),
                section="Brain door",
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
