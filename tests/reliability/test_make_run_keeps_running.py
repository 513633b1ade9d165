"""``make run`` keeps running (issue 38, point 1), and ``/health/`` tells a load balancer when the
site cannot serve (point 2).

A household's checkout (a copy of the shipped files, sharing this test's virtualenv) runs
``make run`` in a terminal of its own (a pseudo-terminal), as a person would. Each of the
Procfile's processes is killed with SIGKILL in turn: supervisord logs which died and why and
starts it again, the process is back (answering, or beating with its new pid) within
:data:`BACK_SECONDS`, and, while the scheduler, the delivery worker or the engine is down, the
site answers every request (the engine's death costs only memory). Then Ctrl-C, typed into that
terminal, stops every process and ``make run`` exits 0.
"""

import fcntl
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import termios
import threading
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.support.households import (
    checkout_copy,
    household_database,
    make_run_command,
    make_run_environment,
)
from tests.support.live_servers import free_port, running_server_process, server_environment
from webui.local_secrets import read_secrets

# Heavy: run by one worker, apart from the load tests (as the two-sites test is).
pytestmark = pytest.mark.xdist_group("production_server")

START_SECONDS = 120
#: How soon a killed process must be back.
BACK_SECONDS = 10
STOP_SECONDS = 60
SPAWNED = re.compile(r"spawned: '(\w+)' with pid (\d+)")


@dataclass
class Terminal:
    """``make run`` in a pseudo-terminal: what it printed so far, kept by a reading thread."""

    process: "subprocess.Popen[bytes]"
    terminal: int
    log: Path
    output: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.output)

    def read_until_closed(self) -> None:
        with self.log.open("a") as log:
            while True:
                ready, _, _ = select.select([self.terminal], [], [], 0.2)
                if not ready:
                    if self.process.poll() is not None:
                        return
                    continue
                try:
                    piece = os.read(self.terminal, 65536).decode(errors="replace")
                except OSError:  # the terminal's far side closed: everything in it ended
                    return
                self.output.append(piece)
                log.write(piece)
                log.flush()

    def pid_of(self, name: str) -> int:
        """The pid supervisord last started ``name`` with."""
        pids = [int(pid) for process, pid in SPAWNED.findall(self.text()) if process == name]
        assert pids, f"supervisord never started {name}: {self.text()[-3000:]}"
        return pids[-1]


def in_own_terminal(terminal: int) -> None:
    """In the child: a session of its own whose controlling terminal is ``terminal``."""
    os.setsid()
    fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)


@contextmanager
def make_run_in_a_terminal(folder: Path, port: int, engine_port: int, database: str | None):
    near, far = os.openpty()
    process = subprocess.Popen(
        make_run_command(port, engine_port),
        cwd=folder,
        env=make_run_environment(port, engine_port, database, TERM="dumb"),
        stdin=far,
        stdout=far,
        stderr=far,
        preexec_fn=lambda: in_own_terminal(far),
    )
    os.close(far)
    terminal = Terminal(process, near, folder.parent / "make-run.log")
    reader = threading.Thread(target=terminal.read_until_closed, daemon=True)
    reader.start()
    try:
        yield terminal
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        for pid in re.findall(r"supervisord started with pid (\d+)", terminal.text()):
            kill_group_of(int(pid))
        reader.join(timeout=10)
        os.close(near)


def kill_group_of(pid: int) -> None:
    """Leave nothing of a failed run behind (a run that ended well has no such group left)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(os.getpgid(pid), signal.SIGKILL)


def answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=3).status_code == 200
    except requests.RequestException:
        return False


def engine_answers(folder: Path, engine_port: int) -> bool:
    """Whether the engine answers with the token ``make run`` made (``.make-run-secrets``)."""
    secrets = folder / ".make-run-secrets"
    token = read_secrets(secrets).get("PIPPA_MEMORY_TOKEN", "") if secrets.exists() else ""
    try:
        answer = requests.get(
            f"http://127.0.0.1:{engine_port}/v1/conversations/"
            "00000000-0000-0000-0000-000000000000/answers",
            headers={"Authorization": f"Bearer {token}"},
            timeout=3,
        )
    except requests.RequestException:
        return False
    return answer.status_code == 200


def beating_pid(folder: Path, database: str | None, role: str) -> int | None:
    """The pid of ``role``'s newest heartbeat in the site's database."""
    query = "SELECT pid FROM webui_processheartbeat WHERE role = %s ORDER BY beat_at DESC"
    try:
        if database:
            import psycopg

            with psycopg.connect(database) as db:
                row = db.execute(query, [role]).fetchone()
        else:
            with sqlite3.connect(folder / "db.sqlite3", timeout=5) as db:
                row = db.execute(query.replace("%s", "?"), [role]).fetchone()
    except Exception:
        return None
    return row[0] if row else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # not a zombie


def test_make_run_starts_a_killed_process_again_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    with household_database("make_run_keeps_running") as database:
        folder = checkout_copy(tmp_path / "household")
        port, engine_port = free_port(), free_port()
        site = f"http://127.0.0.1:{port}"
        with make_run_in_a_terminal(folder, port, engine_port, database) as run:
            deadline = time.monotonic() + START_SECONDS
            while not (answers(f"{site}/health/") and engine_answers(folder, engine_port)):
                assert time.monotonic() < deadline, run.text()[-3000:]
                assert run.process.poll() is None, run.text()[-3000:]
                time.sleep(0.5)

            back = {
                # Back when its new master listens (the killed one's workers may answer a
                # moment longer, so an answer alone would not say it).
                "web": lambda: f"Listening at: {site} ({run.pid_of('web')})" in run.text(),
                "scheduler": lambda: beating_pid(folder, database, "scheduler"),
                "outbox": lambda: beating_pid(folder, database, "delivery"),
                "engine": lambda: engine_answers(folder, engine_port),
            }
            for name, is_back in back.items():
                killed = run.pid_of(name)
                os.kill(killed, signal.SIGKILL)
                killed_at = time.monotonic()
                while True:
                    if name != "web":  # the others keep the site answering throughout
                        assert answers(f"{site}/health/"), f"the site stopped when {name} died"
                    restarted = run.pid_of(name)
                    if restarted != killed and alive(restarted):
                        found = is_back()
                        if found is True or found == restarted:
                            break
                    assert time.monotonic() - killed_at < BACK_SECONDS, (
                        f"{name} was not back within {BACK_SECONDS} s: {run.text()[-3000:]}"
                    )
                    time.sleep(0.2)
                while not answers(f"{site}/accounts/login/"):  # its workers may boot slowly
                    assert time.monotonic() - killed_at < START_SECONDS, run.text()[-3000:]
                    time.sleep(0.2)
                said = f"exited: {name} (terminated by SIGKILL; not expected)"
                assert said in run.text(), f"no log line said why {name} stopped"

            pids = {name: run.pid_of(name) for name in back}
            os.write(run.terminal, b"\x03")  # Ctrl-C, typed into make run's terminal
            assert run.process.wait(timeout=STOP_SECONDS) == 0, run.text()[-3000:]
            assert not [name for name, pid in pids.items() if alive(pid)], run.text()[-3000:]
            assert not answers(f"{site}/health/")
            assert "Error" not in run.text().split("received SIGINT")[-1]


@pytest.mark.parametrize(
    "database",
    [
        pytest.param("postgres://postgres@127.0.0.1:{closed}/gone", id="server-down"),
        pytest.param("sqlite:///{tmp}/never-migrated.sqlite3", id="no-site-tables"),
    ],
)
def test_health_is_503_with_no_details_when_the_database_cannot_serve(
    tmp_path: Path, database: str
) -> None:
    port = free_port()
    env = server_environment(
        DATABASE_URL=database.format(closed=free_port(), tmp=tmp_path),
        DJANGO_LOG_LEVEL="CRITICAL",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    )
    command = ["gunicorn", "-c", "python:pippa_site.gunicorn_conf", "-b", f"127.0.0.1:{port}"]
    with running_server_process([*command, "pippa_site.wsgi"], port=port, env=env) as (url, _):
        answer = requests.get(f"{url}/health/", timeout=10)

    assert answer.status_code == 503
    assert answer.text == "unavailable\n"
