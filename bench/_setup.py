"""Shared set-up for the benchmarks: Django on a fresh SQLite file, the demo household, and the
reference engine on a loopback port. Benchmarks print ratios measured side by side in one run."""

import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_django(**env: str) -> Path:
    """Configure Django on a new SQLite file (returned), migrate it and make the cache's table."""
    folder = Path(tempfile.mkdtemp(prefix="pippa-bench-"))
    database = folder / "bench.sqlite3"
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "webui.settings",
            "DATABASE_URL": f"sqlite:///{database}",
            "DJANGO_LOG_LEVEL": "ERROR",
            "PIPPA_MEMORY_TOKEN": "bench-token",
            **env,
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return database


def household() -> dict[str, Any]:
    """A member, the demo soul and the offline vessel."""
    from django.contrib.auth import get_user_model

    from webui.models import Soul, Vessel

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"first_name": "Bench"}
    )
    user.set_password("bench-password-123")
    user.save()
    soul, _ = Soul.objects.get_or_create(
        slug="pippa", defaults={"name": "Pippa", "vault_path": str(ROOT / "demo/vaults/pippa")}
    )
    vessel, _ = Vessel.objects.get_or_create(
        slug="offline",
        defaults={
            "name": "Offline",
            "adapter": "offline",
            "model": "offline-1",
            "brain_priority": 1,
        },
    )
    return {"user": user, "soul": soul, "vessel": vessel}


def configure_memory(**values: Any) -> None:
    from django.conf import settings

    settings.PIPPA_MEMORY = {**settings.PIPPA_MEMORY, **values}
    from pippa_memory.client import BREAKER

    BREAKER.reset()


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def closed_port_url() -> str:
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}"
