"""``make run`` keeps its secrets: in a fresh checkout under ``umask 022``, its first run makes a
random Django secret key, engine token and ``whsec_`` brain secret into a git-ignored file only its
owner can read, its processes use them (not the old fixed demo values), every database file and
WAL file it creates is ``0600``, a later run reads the same secrets back, and the production
profile still refuses to start without a key of its own.

The checkout is this one's shipped files and ``.gitignore`` in a new git repository, sharing this
test's virtualenv; ``make`` is told not to reinstall requirements (``-o .venv/.run-installed``).
It runs SQLite (the files are the point), whichever database the suite runs on.
"""

import stat
import subprocess
import time
from pathlib import Path

import pytest
import requests
from standardwebhooks.webhooks import Webhook

from tests.support.households import checkout_copy, make_run, wait_until_serving
from tests.support.live_servers import free_port, server_environment

pytestmark = pytest.mark.xdist_group("production_server")

SECRETS = ".make-run-secrets"
OLD_FIXED = {
    "DJANGO_SECRET_KEY": "django-insecure-development-key-only-for-the-local-demo-never-deploy-this",
    "PIPPA_MEMORY_TOKEN": "demo-engine-token",
    "PIPPA_MEMORY_BRAIN_SECRET": "whsec_ZGVtby1icmFpbi1kb29yLXNlY3JldC1ub3QtZm9yLXByb2R1Y3Rpb24=",
}
START_SECONDS = 90


def fresh_checkout(folder: Path) -> Path:
    """The shipped files and the .gitignore that keeps the secrets and databases out of git, in a
    new git repository, with this test's virtualenv."""
    checkout_copy(folder, ".gitignore")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def parents() -> dict[int, int]:
    """Each running process's parent, by process id."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            found[int(entry.name)] = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (ValueError, OSError):
            continue
    return found


def environments_of(ancestor: int, word: str) -> list[dict[str, str]]:
    """The environments of ``ancestor``'s descendants whose command line holds ``word``."""
    parent_of = parents()
    found = []
    for pid in parent_of:
        above = parent_of.get(pid)
        while above not in (None, 0, ancestor):
            above = parent_of.get(above)
        if above != ancestor:
            continue
        try:
            if word.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
        found.append({k.decode(): v.decode(errors="replace") for k, _, v in pairs})
    return found


def secrets_in(folder: Path) -> dict[str, str]:
    lines = (folder / SECRETS).read_text().splitlines()
    pairs = (line.partition("=") for line in lines if line and not line.startswith("#"))
    return {name: value for name, _, value in pairs}


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def files_and_modes(folder: Path) -> tuple[list[Path], dict[str, str]]:
    """The databases' files (with their WAL files), ``.demo-login`` and the secrets file, with
    each one's mode. SQLite deletes a WAL file when the last connection to its database closes,
    and the site's processes open theirs now and then: read again until both WAL files are there
    (a few seconds at most, the scheduler beating every five), so their modes are seen too."""
    deadline = time.monotonic() + 30
    while True:
        files = sorted(
            [*folder.glob("db.sqlite3*"), *folder.glob("engine.sqlite3*"), folder / ".demo-login"]
        )
        try:
            modes = {path.name: mode(path) for path in [*files, folder / SECRETS]}
        except FileNotFoundError:  # a WAL file went between the listing and its mode
            continue
        if {"db.sqlite3-wal", "engine.sqlite3-wal"} <= set(modes) or time.monotonic() > deadline:
            return files, modes
        time.sleep(0.05)


def test_a_fresh_make_run_keeps_secrets_of_its_own_and_files_only_its_owner_reads(
    tmp_path: Path,
) -> None:
    folder = fresh_checkout(tmp_path / "household")
    port, engine_port, log = free_port(), free_port(), tmp_path / "make-run.log"
    running = {"port": port, "engine_port": engine_port, "database": None, "log": log}
    with make_run(folder, **running, umask=0o022) as make:
        waiting = {"seconds": START_SECONDS, "log": log}
        wait_until_serving(f"http://127.0.0.1:{port}", path="/accounts/login/", **waiting)
        made = secrets_in(folder)
        engine_url, head = f"http://127.0.0.1:{engine_port}", "/v1/souls/pippa/head"
        bearer = {"Authorization": f"Bearer {made['PIPPA_MEMORY_TOKEN']}"}
        wait_until_serving(engine_url, path=head, headers=bearer, **waiting)
        fixed = requests.get(
            engine_url + head, headers={"Authorization": "Bearer demo-engine-token"}, timeout=5
        )
        web = environments_of(make.pid, "gunicorn")
        engine = environments_of(make.pid, "reference_engine")
        files, modes = files_and_modes(folder)

    assert set(made) == set(OLD_FIXED)
    for name, old in OLD_FIXED.items():
        assert made[name] != old, f"{name} is the old fixed demo value"
    assert len(made["DJANGO_SECRET_KEY"]) >= 50
    Webhook(made["PIPPA_MEMORY_BRAIN_SECRET"])  # a usable whsec_ secret, or this raises
    assert fixed.status_code == 401, "the engine still takes the old public token"
    assert web, log.read_text()[-3000:]
    assert engine, log.read_text()[-3000:]
    for environment in [*web, *engine]:
        for name, value in made.items():
            assert environment.get(name) == value, f"a process runs without the kept {name}"
    names = set(modes)
    assert {"db.sqlite3", "db.sqlite3-wal", "engine.sqlite3", "engine.sqlite3-wal"} <= names, modes
    assert set(modes.values()) == {"0o600"}, modes
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", SECRETS, *[path.name for path in files]],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert set(ignored.stdout.split()) == {SECRETS, *(path.name for path in files)}

    # A later run reads the same secrets back (make run's steps all start through this).
    printed = subprocess.run(
        [".venv/bin/python", "-m", "webui.local_secrets", SECRETS, "--", "env"],
        cwd=folder,
        env=server_environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name, value in made.items():
        assert f"{name}={value}" in printed
    assert secrets_in(folder) == made

    # The production profile takes no key from the demo's file: without its own, it refuses.
    refused = subprocess.run(
        [".venv/bin/python", "manage.py", "check", "--deploy"],
        cwd=folder,
        env=server_environment(DJANGO_SETTINGS_MODULE="pippa_site.settings_production"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in refused.stderr
