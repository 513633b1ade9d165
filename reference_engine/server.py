"""The reference engine in this process, on a real loopback socket, for tests and benches.

It runs what production runs: gunicorn's own threaded worker (``gthread``: its HTTP/1.1 parser,
keep-alive, request threads and limits, configured as :mod:`.service` configures it) serving the
same :class:`~.app.EngineApp`, here in a background thread rather than a forked process, so a
test can reach the engine's state and faults directly.
"""

import os
import shutil
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from gunicorn.config import Config
from gunicorn.glogging import Logger
from gunicorn.sock import TCPSocket
from gunicorn.workers.gthread import ThreadWorker

from reference_engine.app import EngineApp
from reference_engine.block_budget import DEFAULT_BLOCK_CHARS
from reference_engine.brain_client import BrainClient
from reference_engine.config import DEFAULTS
from reference_engine.faults import MODES
from reference_engine.state import EngineState
from reference_engine.storage.database import Database

THREADS = 8
"""Request threads, as ``manage.py memory_engine`` runs the engine (``--threads``)."""


class ThreadedWorker(ThreadWorker):  # type: ignore[misc] - gunicorn ships no types
    """gunicorn's gthread worker run in a thread of this process: no signals of its own (only
    a process's main thread may set them); :meth:`stop` ends it as SIGTERM would."""

    def init_signals(self) -> None:
        """The process's signals stay the test runner's."""

    def stop(self) -> None:
        """Stop as on SIGTERM: no new connections, requests in flight finished."""
        self.alive = False
        self.method_queue.defer(lambda: None)  # wake the worker's loop

    def _cap_keepalive(self, deadline: float) -> None:
        """Idle kept-alive connections are closed as the worker stops, not after gunicorn's
        linger: a test that stops its engine means it to be down now."""
        super()._cap_keepalive(time.monotonic())

    def release(self) -> None:
        """Close what the worker opened beside its sockets: its wake-up pipe and heartbeat file."""
        for end in getattr(self, "PIPE", ()):
            with suppress(OSError):
                os.close(end)
        self.tmp.close()


class Served:
    """What gunicorn's worker loads: the engine's app, which :meth:`ReferenceEngine.serve` may
    replace while it runs."""

    def __init__(self, app: EngineApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.app(environ, start_response)

    def wsgi(self) -> "Served":
        return self


def worker_config(host: str, port: int, threads: int, booted: threading.Event) -> Config:
    """gunicorn's settings for the engine: threaded, keep-alive, quiet (the app logs access);
    ``booted`` is set once the worker is about to serve."""
    config = Config()
    for name, value in {
        "post_worker_init": lambda worker: booted.set(),
        "bind": f"{host}:{port}",
        "worker_class": "gthread",
        "threads": threads,
        "keepalive": 5,
        "graceful_timeout": 5,
        "accesslog": None,
        "loglevel": "warning",
        "control_socket_disable": True,
    }.items():
        config.set(name, value)
    return config


class ReferenceEngine:
    """The reference engine on a real socket, served by gunicorn in a background thread.

    ``database`` is an engine database URL or file; with none, a fresh SQLite file in a
    temporary folder is used and removed at :meth:`stop`. ``control`` opens ``/_control/``.
    ``brain`` is the brain door asks and briefs are thought through (none: not configured);
    ``block_chars`` the budget of every block.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str = "",
        answer_delay: float = 1.0,
        database: str | None = None,
        control: bool = False,
        brain: BrainClient | None = None,
        threads: int = THREADS,
        block_chars: int = DEFAULT_BLOCK_CHARS,
        recall: str = DEFAULTS.recall,
        language: str = DEFAULTS.language,
        decide_confidence: float = DEFAULTS.decide_confidence,
    ) -> None:
        self.scratch = None if database else Path(tempfile.mkdtemp(prefix="engine-"))
        self.database = Database(database or str(self.scratch / "engine.sqlite3"))
        self.state = EngineState(
            self.database,
            answer_delay=answer_delay,
            brain=brain,
            block_chars=block_chars,
            recall=recall,
            language=language,
            decide_confidence=decide_confidence,
        )
        # The tests read what this engine received (:attr:`received`), door or no door.
        self.app = EngineApp(self.state, token=token, control=control, log_requests=True)
        self.served = Served(self.app)
        self.booted = threading.Event()
        config = worker_config(host, port, threads, self.booted)
        log = Logger(config)
        self.listener = TCPSocket((host, port), config, log)
        bound_host, bound_port = self.listener.getsockname()[:2]
        self.address = f"http://{bound_host}:{bound_port}"
        self.worker = ThreadedWorker(
            age=1,
            ppid=os.getppid(),
            sockets=[self.listener],
            app=self.served,
            timeout=30,
            cfg=config,
            log=log,
        )
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return self.address

    @property
    def received(self) -> list[dict[str, Any]]:
        return self.app.log.all()

    @property
    def token(self) -> str:
        return self.app.token

    @token.setter
    def token(self, value: str) -> None:
        self.app.token = value

    def start(self) -> "ReferenceEngine":
        self.thread = threading.Thread(
            target=self.worker.init_process, name="reference-engine", daemon=True
        )
        self.thread.start()
        if not self.booted.wait(timeout=30):
            raise RuntimeError("the engine's gunicorn worker did not start within 30 s")
        self.state.thinker.start()
        self.state.backfill.start()
        return self

    def stop(self) -> None:
        self.app.faults.clear()
        self.state.thinker.stop()
        self.state.backfill.stop()
        if self.thread is not None:
            self.worker.stop()
            self.thread.join(timeout=10)
        self.worker.release()
        self.listener.close()
        self.database.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def serve(self, app: EngineApp) -> None:
        """Serve ``app`` from the next request on (a test's own configuration of the app)."""
        self.served.app = app

    def set_fault(self, mode: str, **options: Any) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        self.app.faults.set({"mode": mode, **options})

    def reset(self, *, state: bool = False) -> None:
        self.app.faults.clear()
        if state:
            self.state.clear()
            self.app.log.clear()
