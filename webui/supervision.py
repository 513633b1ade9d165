"""``python -m webui.supervision``: ``make run``'s processes, kept running by supervisord.

The ``Procfile`` stays the one description of the site's processes (what production runs under
systemd or a container each: ``docs/deployment.md``). This reads it, writes supervisord's
settings for it into ``.run/`` and runs supervisord in the foreground. supervisord (Supervisor,
``requirements-run.txt``) starts each line; when one dies it logs which and why (``exited: engine
(terminated by SIGKILL; not expected)``) and starts it again at once, the others serving on; one
that keeps dying within :data:`START_SECONDS` of its start is tried again after 1, 2, 3 … seconds
(supervisord's backoff), :data:`START_RETRIES` times before it is given up.

Ctrl-C stops everything and ends with status 0. In a terminal, ``make`` itself would also get the
Ctrl-C, and GNU make always ends killed by it (status 130, whatever its recipe did). So this takes
the terminal's foreground for its own process group while it runs, as a shell does for a job:
Ctrl-C reaches supervisord, which stops every process, and then ``make`` sees its recipe end with 0.
Ctrl-Z is ignored (a stopped supervisor would leave ``make``, and its shell, waiting for ever).
SIGINT, SIGTERM or SIGHUP sent to this process are passed on to supervisord, which stops everything.
"""

import argparse
import contextlib
import fcntl
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

#: A process must stay up this long to count as started; one that dies sooner is backed off.
START_SECONDS = 3
#: Tries, each waiting a second longer than the one before, before a process is given up.
START_RETRIES = 60
#: How each process is stopped: the signal, and how long it is given before it is killed. The
#: web server stops at once on SIGINT, saving replies being written as interrupted (Ctrl-C is a
#: quick stop: ``docs/deployment.md``); the others finish what they hold on SIGTERM.
STOPPING = {"web": ("INT", 15)}
DEFAULT_STOPPING = ("TERM", 15)
PROCFILE_LINE = re.compile(r"^(?P<name>[A-Za-z0-9_-]+):\s*(?P<command>.+)$")


class ProcfileError(ValueError):
    """The Procfile cannot be read as ``name: command`` lines."""


@dataclass(frozen=True)
class Process:
    """One ``Procfile`` line: its name and its shell command."""

    name: str
    command: str


def read_procfile(path: Path) -> list[Process]:
    """The processes ``path`` names, in order; blank lines and ``#`` comments are skipped."""
    processes = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = PROCFILE_LINE.match(line.strip())
        if found is None:
            raise ProcfileError(f"{path}:{number} is not a `name: command` line: {line!r}")
        processes.append(Process(found["name"], found["command"]))
    names = [process.name for process in processes]
    if not processes or len(set(names)) != len(names):
        raise ProcfileError(f"{path} must name at least one process, each once: {names}")
    return processes


def supervisord_settings(processes: list[Process], *, folder: Path, run_folder: Path) -> str:
    """supervisord's settings (its INI text) for ``processes``, run in ``folder``, each one's
    output passed to supervisord's own (this terminal), its state kept in ``run_folder``."""
    lines = [
        "; Written by `python -m webui.supervision` from the Procfile at each `make run`.",
        "[supervisord]",
        "nodaemon=true",
        "logfile=/dev/null",
        "logfile_maxbytes=0",
        f"pidfile={run_folder / 'supervisord.pid'}",
        f"childlogdir={run_folder}",
        "loglevel=info",
    ]
    if os.geteuid() == 0:
        lines.append("user=root")  # says so, instead of a warning that privileges were kept
    for process in processes:
        stop_signal, stop_seconds = STOPPING.get(process.name, DEFAULT_STOPPING)
        # ``exec``: supervisord's child is the process itself, so its death is seen and logged.
        command = shlex.join(["/bin/sh", "-c", f"exec {process.command}"])
        lines += [
            "",
            f"[program:{process.name}]",
            f"command={command.replace('%', '%%')}",
            f"directory={folder}",
            "autorestart=true",
            f"startsecs={START_SECONDS}",
            f"startretries={START_RETRIES}",
            f"stopsignal={stop_signal}",
            f"stopwaitsecs={stop_seconds}",
            "stopasgroup=true",
            "killasgroup=true",
            "redirect_stderr=true",
            "stdout_logfile=/dev/stdout",
            "stdout_logfile_maxbytes=0",
            'environment=PYTHONUNBUFFERED="1"',  # each line as it is written, as honcho had it
        ]
    return "\n".join(lines) + "\n"


def write_settings(processes: list[Process], *, folder: Path, run_folder: Path) -> Path:
    """Write supervisord's settings into ``run_folder`` (made readable by its owner only)."""
    run_folder.mkdir(mode=0o700, exist_ok=True)
    path = run_folder / "supervisord.conf"
    path.write_text(
        supervisord_settings(processes, folder=folder, run_folder=run_folder), encoding="utf-8"
    )
    path.chmod(0o600)
    return path


@contextlib.contextmanager
def terminal_foreground() -> Iterator[None]:
    """While the block runs, this process group holds the controlling terminal's foreground (so
    Ctrl-C reaches it and not ``make``), and Ctrl-Z is ignored; the terminal is given back after.
    Without a terminal, or when not in its foreground, nothing changes."""
    try:
        terminal = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        yield
        return
    original = os.getpgrp()
    try:
        if os.tcgetpgrp(terminal) != original:
            yield
            return
        try:
            os.setpgid(0, 0)
        except OSError:  # a session leader already holds its terminal
            yield
            return
        signal.signal(signal.SIGTSTP, signal.SIG_IGN)
        give_terminal(terminal, os.getpgrp())
        try:
            yield
        finally:
            give_terminal(terminal, original)
    finally:
        os.close(terminal)


def give_terminal(terminal: int, group: int) -> None:
    """Make ``group`` the terminal's foreground (a background group may, with SIGTTOU ignored)."""
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(terminal, group)
    except OSError:
        pass  # that group has ended: the shell takes its terminal back when make ends
    finally:
        signal.signal(signal.SIGTTOU, previous)


def append_to_output_files() -> None:
    """When this process's output is a file (``make run > site.log``), make every write to it
    append: supervisord opens ``/dev/stdout`` anew for the processes' output, which for a file
    is a second handle that would otherwise write over its own log lines."""
    for descriptor in (1, 2):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.fstat(descriptor).st_mode):
                flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
                fcntl.fcntl(descriptor, fcntl.F_SETFL, flags | os.O_APPEND)


def supervise(settings: Path) -> int:
    """Run supervisord with ``settings`` until it ends; its status (0 after a stop it was asked
    for). SIGINT, SIGTERM and SIGHUP sent here are passed on to it."""
    started: list[subprocess.Popen[bytes]] = []
    asked: list[int] = []

    def pass_on(signum: int, frame: FrameType | None) -> None:
        asked.append(signum)
        for supervisor in started:
            with contextlib.suppress(ProcessLookupError):
                supervisor.send_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, pass_on)
    started.append(
        subprocess.Popen([sys.executable, "-m", "supervisor.supervisord", "-c", str(settings)])
    )
    if asked:  # a stop asked for while it was being started
        started[0].send_signal(asked[-1])
    status = started[0].wait()
    return status if status >= 0 else 128 - status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procfile", default="Procfile", type=Path)
    parser.add_argument("--run-folder", default=".run", type=Path)
    options = parser.parse_args(argv)
    folder = Path.cwd()
    try:
        processes = read_procfile(options.procfile)
    except (OSError, ProcfileError) as error:
        print(f"Cannot start the site's processes: {error}", file=sys.stderr)
        return 2
    settings = write_settings(
        processes, folder=folder, run_folder=(folder / options.run_folder).resolve()
    )
    append_to_output_files()
    names = ", ".join(process.name for process in processes)
    print(f"Starting {names} under supervisord ({settings}); Ctrl-C stops them.", flush=True)
    with terminal_foreground():
        return supervise(settings)


if __name__ == "__main__":
    sys.exit(main())
