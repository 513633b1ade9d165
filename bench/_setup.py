"""Shared set-up for the benchmarks: Django on a fresh database (a new SQLite file, or a scratch
PostgreSQL database dropped at exit), the demo household, quick mode, small statistics, and
loops run at once.
Benchmarks report figures through :func:`_report.figure`, measured side by side in one run."""

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: ``BENCH_QUICK=1`` (or ``--quick``): every script runs with few rounds, to check that it works
#: end to end, not to measure. ``bench/write_benchmarks.py --quick`` sets it for every script.
QUICK = os.environ.get("BENCH_QUICK") == "1"
#: Where scratch PostgreSQL databases are made (``bench_<script>_<random>``, dropped at exit).
POSTGRES_SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432")
DATABASES = ("sqlite", "postgres")


def arguments(description: str, **rounds: tuple[int, int]) -> argparse.Namespace:
    """The command line every script shares: ``--database`` and ``--quick``, plus one integer
    option per ``rounds`` entry, given as ``name=(full, quick)``; quick mode takes the second."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database", choices=DATABASES, default="sqlite")
    parser.add_argument("--quick", action="store_true", help="few rounds: a check, not a figure")
    for name in rounds:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=None)
    args = parser.parse_args()
    global QUICK
    QUICK = args.quick = QUICK or args.quick  # BENCH_QUICK=1 counts as --quick
    if QUICK:
        os.environ["BENCH_QUICK"] = "1"
    for name, (full, quick) in rounds.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if QUICK else full)
    return args


def scratch_database(database: str, label: str) -> str:
    """The ``DATABASE_URL`` of a new, empty database: a SQLite file in a new folder, or a
    PostgreSQL database on :data:`POSTGRES_SERVER` that is dropped when the script ends."""
    if database == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="pippa-bench-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return f"sqlite:///{folder / 'bench.sqlite3'}"
    import psycopg

    name = f"bench_{label}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    atexit.register(drop)
    return f"{POSTGRES_SERVER}/{name}"


def setup_django(*, database: str = "sqlite", label: str = "run", **env: str) -> str:
    """Configure Django on a new database of kind ``database`` (``sqlite`` or ``postgres``),
    migrate it and make the cache's table; returns its ``DATABASE_URL``."""
    url = scratch_database(database, label)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "pippa_site.settings",
            "DATABASE_URL": url,
            "DJANGO_LOG_LEVEL": "ERROR",
            "PIPPA_MEMORY_TOKEN": "bench-token",
            **env,
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return url


def backend_name(database: str) -> str:
    """How a figure names the database it ran on."""
    return "SQLite" if database == "sqlite" else "PostgreSQL"


def household() -> dict[str, Any]:
    """A member, the demo soul and the offline vessel."""
    from django.contrib.auth import get_user_model

    from webui.models import Soul

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"first_name": "Bench"}
    )
    user.set_password("bench-password-123")
    user.save()
    soul, _ = Soul.objects.get_or_create(
        slug="pippa", defaults={"name": "Pippa", "vault_path": str(ROOT / "demo/vaults/pippa")}
    )
    offline = vessel(
        "offline", name="Offline", adapter="offline", model="offline-1", brain_priority=1
    )
    return {"user": user, "soul": soul, "vessel": offline}


def vessel(slug: str, **fields: Any) -> Any:
    """The vessel ``slug``, made with ``fields`` the first time it is asked for."""
    from webui.models import Vessel

    return Vessel.objects.get_or_create(slug=slug, defaults=fields)[0]


def configure_memory(**values: Any) -> None:
    from django.conf import settings

    settings.PIPPA_MEMORY = {**settings.PIPPA_MEMORY, **values}
    from pippa_memory.engine.client import BREAKER

    BREAKER.reset()


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def at_once(work: Callable[[Any], object], shares: Iterable[Any]) -> float:
    """Run ``work`` on each of ``shares``, each on a thread of its own, all at once; the seconds
    from starting them to the last one's end."""
    threads = [threading.Thread(target=work, args=(share,)) for share in shares]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started
