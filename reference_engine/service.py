"""The reference engine as a service: its WSGI app under gunicorn (HTTP/1.1, keep-alive, threads).

``python -m reference_engine`` (:mod:`.__main__`) runs :func:`serve` with the engine's
:class:`~.config.EngineConfig`. The app is built in the worker process (never before the fork),
so no database connection is shared between processes. One worker: the control door's faults and
request log live in that worker's memory; engines that share one PostgreSQL database may run as
several processes.

Stopping by SIGTERM (what a supervisor and honcho send) is graceful, and said in the log: the engine takes no new
connection, finishes the requests in flight, and tells its thinker to stop between asks (a brain
call under way is finished and its answer written), all within ``graceful_timeout`` seconds.
"""

import logging
import time
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.workers.gthread import ThreadWorker

from reference_engine.app import EngineApp
from reference_engine.backup import NightlyCopies
from reference_engine.brain_client import BrainClient
from reference_engine.config import EngineConfig
from reference_engine.state import EngineState
from reference_engine.storage.database import Database

logger = logging.getLogger("reference_engine.service")


def brain_of(config: EngineConfig) -> BrainClient:
    """The brain-door client ``config`` describes (not configured without a URL and secret)."""
    return BrainClient(
        config.brain_url,
        config.brain_secret,
        timeout=config.brain_timeout,
        connect_timeout=config.brain_connect_timeout,
        max_bytes=config.brain_max_bytes,
    )


def open_state(config: EngineConfig, *, brain: BrainClient | None = None) -> EngineState:
    """The engine's state on ``config``'s database, its pending migrations applied."""
    database = Database(config.database, pool_size=config.pool_size)
    return EngineState(
        database,
        answer_delay=config.answer_delay,
        brain=brain,
        block_chars=config.block_chars,
        recall=config.recall,
        language=config.language,
        decide_confidence=config.decide_confidence,
    )


class EngineWorker(ThreadWorker):  # type: ignore[misc] - gunicorn ships no types
    """gunicorn's threaded worker, which on SIGTERM also tells the engine's thinker to stop
    between asks, and says what it is waiting for."""

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.alive:
            state = getattr(self.app, "state", None)
            logger.info(
                "Stopping (signal %s): taking no new requests, finishing those in flight on %s "
                "connection(s), and the thinker stops between asks (up to %g s)",
                sig,
                self.nr_conns,
                self.cfg.graceful_timeout,
            )
            if state is not None:
                state.thinker.ask_to_stop()  # seen between asks; a call under way finishes
        super().handle_exit(sig, frame)

    def run(self) -> None:
        started = time.monotonic()
        try:
            super().run()
        finally:
            self.finish(started)

    def finish(self, started: float) -> None:
        """After the last request: wait for the thinker's current ask, then close the database."""
        state = getattr(self.app, "state", None)
        if state is None:
            return
        left = max(1.0, self.cfg.graceful_timeout - (time.monotonic() - started))
        state.backfill.stop()
        stopped = state.thinker.stop(timeout=left)
        if stopped:
            logger.info("The thinker stopped between asks; closing the database")
        else:
            logger.warning(
                "The thinker's brain call did not finish within %g s; its ask is asked again "
                "at the next start",
                left,
            )
        state.thinker.brain.close()
        nightly = getattr(self.app, "nightly", None)
        if nightly is not None:
            nightly.stop()
        state.database.close()
        logger.info("Stopped")


class EngineService(BaseApplication):  # type: ignore[misc] - gunicorn ships no types
    """gunicorn, configured here rather than from its command line, serving one engine."""

    def __init__(self, config: EngineConfig, options: dict[str, Any]) -> None:
        self.config, self.options = config, options
        self.state: EngineState | None = None
        self.nightly: NightlyCopies | None = None
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self) -> EngineApp:
        self.state = open_state(self.config, brain=brain_of(self.config))
        self.state.thinker.start()  # in the worker, after the fork: asks are answered off requests
        self.state.backfill.start()  # memories kept before meaning vectors get theirs
        if self.config.backup_dir:
            folder = Path(self.config.backup_dir)
            self.nightly = NightlyCopies(self.config.database, folder, self.config.backup_keep)
            self.nightly.start()
        return EngineApp(self.state, token=self.config.token, control=self.config.control)


def gunicorn_options(config: EngineConfig) -> dict[str, Any]:
    """gunicorn's settings for ``config``: one threaded worker, keep-alive, a graceful stop."""
    return {
        "bind": f"{config.host}:{config.port}",
        "workers": 1,
        "worker_class": "reference_engine.service.EngineWorker",
        "threads": config.threads,
        "keepalive": 5,
        "graceful_timeout": config.graceful_timeout,
        "accesslog": None,
        "loglevel": config.log_level,
        "proc_name": "pippa-memory-engine",
        # gunicorn's control socket is a fixed path in the home folder: two sites would clash.
        "control_socket_disable": True,
    }


def serve(config: EngineConfig) -> None:
    """Serve the engine until stopped (SIGTERM: gracefully; Ctrl-C: at once); asks, briefs and
    curation are thought through the brain door ``config`` names (none: they say the door is not
    configured); every block is rendered within ``config.block_chars`` (:mod:`.block_budget`)."""
    EngineService(config, gunicorn_options(config)).run()
