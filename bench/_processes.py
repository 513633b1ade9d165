"""The project's own processes for the benchmarks that measure them as deployed: the commands as the
``Procfile`` states them (so a bench runs what ``make run`` and production run), started on free
loopback ports with the bench's database, waited for, and stopped. A free port and an environment
without the project's own variables are the test suite's (tests/support/live_servers.py)."""

import atexit
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

import requests
from _setup import ROOT

from tests.support.live_servers import free_port, server_environment

TOKEN = "bench-token"
SECRET_KEY = "bench-production-profile-secret-" + "s" * 40


def closed_port_url() -> str:
    """A loopback URL nothing answers at."""
    return f"http://127.0.0.1:{free_port()}"


def procfile() -> dict[str, str]:
    """The ``Procfile``'s processes: name to command line."""
    found = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, sep, command = line.partition(":")
        if sep and name.strip() and not name.startswith("#"):
            found[name.strip()] = command.strip()
    return found


def delivery_processes() -> dict[str, str]:
    """The Procfile processes that deliver turn events (today ``outbox``, ``memory_outbox
    deliver``)."""
    return {name: command for name, command in procfile().items() if "memory_outbox" in command}


def environment(database_url: str, **settings: str) -> dict[str, str]:
    """This process's environment without the project's own variables, plus the bench's."""
    env = server_environment()
    env.update(
        {
            "DATABASE_URL": database_url,
            "DJANGO_LOG_LEVEL": "ERROR",
            "PIPPA_MEMORY_TOKEN": TOKEN,
            "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
            **settings,
        }
    )
    return env


def production_environment(database_url: str, **settings: str) -> dict[str, str]:
    """The production profile on loopback HTTP (no TLS redirect), static files collected."""
    static = Path(tempfile.mkdtemp(prefix="pippa-bench-static-"))
    atexit.register(shutil.rmtree, static, ignore_errors=True)
    return environment(
        database_url,
        DJANGO_SETTINGS_MODULE="pippa_site.settings_production",
        DJANGO_SECRET_KEY=SECRET_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_STATIC_ROOT=str(static),
        **settings,
    )


class Process:
    """One started process: its command, and its output kept in a file for when it fails."""

    def __init__(self, name: str, command: str, env: dict[str, str]) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - open while the process runs
            "w+", prefix=f"pippa-bench-{name}-", delete=False
        )
        self.popen = subprocess.Popen(
            ["sh", "-c", "exec " + command],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            self.log.flush()
            output = Path(self.log.name).read_text()[-3000:]
            raise RuntimeError(f"{self.name} exited ({self.popen.returncode}):\n{output}")

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)
        self.log.close()
        os.unlink(self.log.name)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system, every thread) process ``pid`` and the processes under it
    (gunicorn's master and its workers) have used so far; a child that has already exited is
    not counted."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:  # it exited meanwhile
        return 0.0
    used = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return used + sum(cpu_seconds(int(child)) for child in children)


def wait_until_answering(process: Process, url: str, *, seconds: float = 60) -> None:
    """Return once ``url`` answers at all; raise with the process's output if it never does."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            requests.get(url, timeout=5)
            return
        except requests.RequestException:
            process.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{process.name} did not answer {url} within {seconds:g} s"
                ) from None
            time.sleep(0.1)


class Spec(NamedTuple):
    """A process to start: its name, its command line, the URL that answers once it is ready
    (None: nothing to wait for), and settings of its own on top of the shared environment."""

    name: str
    command: str
    ready: str | None = None
    env: dict[str, str] = {}


@contextmanager
def running(processes: Sequence[Spec], env: dict[str, str]) -> Iterator[list[Process]]:
    """Run each process until the block ends; one with a ready URL is waited for until it
    answers."""
    with ExitStack() as stack:
        started = []
        for spec in processes:
            process = Process(spec.name, spec.command, {**env, **spec.env})
            stack.callback(process.stop)
            started.append(process)
        for spec, process in zip(processes, started, strict=True):
            if spec.ready:
                wait_until_answering(process, spec.ready)
        yield started


def engine_command(port: int, *, database: str = "") -> str:
    """The reference engine in its own process (``python -m reference_engine``), with the control
    door open (benches read its request log), on ``database`` or a fresh SQLite file."""
    if not database:
        folder = tempfile.mkdtemp(prefix="bench-engine-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        database = str(Path(folder) / "engine.sqlite3")
    return (
        f"python -m reference_engine --port {port} --token {shlex.quote(TOKEN)} "
        f"--database {shlex.quote(database)} --control"
    )
