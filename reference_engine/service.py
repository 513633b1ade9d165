"""The reference engine as a service: its WSGI app under gunicorn (HTTP/1.1, keep-alive, threads).

``manage.py memory_engine`` runs :func:`serve`. The app is built in the worker process (never
before the fork), so no database connection is shared between processes. One worker by default:
the control door's faults and request log live in that worker's memory; engines that share one
PostgreSQL database may run as several processes.
"""

import os
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from reference_engine.app import EngineApp
from reference_engine.block_budget import DEFAULT_BLOCK_CHARS
from reference_engine.brain_client import BrainClient
from reference_engine.state import EngineState
from reference_engine.storage.database import DEFAULT_FILE, ENV_NAME, Database


def database_url(given: str | None, *, beside: Path) -> str:
    """The engine database: ``given``, else ``PIPPA_ENGINE_DATABASE_URL``, else
    ``engine.sqlite3`` in the folder ``beside`` (where ``manage.py`` is)."""
    return given or os.environ.get(ENV_NAME) or str(beside / DEFAULT_FILE)


def open_state(
    url: str,
    *,
    answer_delay: float = 1.0,
    brain: BrainClient | None = None,
    block_chars: int = DEFAULT_BLOCK_CHARS,
) -> EngineState:
    """The engine's state on the database at ``url`` (its tables created when missing)."""
    return EngineState(
        Database(url), answer_delay=answer_delay, brain=brain, block_chars=block_chars
    )


class EngineService(BaseApplication):  # type: ignore[misc] - gunicorn ships no types
    """gunicorn, configured here rather than from its command line, serving one engine."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        control: bool,
        answer_delay: float,
        brain: BrainClient,
        options: dict[str, Any],
        block_chars: int = DEFAULT_BLOCK_CHARS,
    ) -> None:
        self.url, self.token, self.control, self.options = url, token, control, options
        self.answer_delay, self.brain, self.block_chars = answer_delay, brain, block_chars
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self) -> EngineApp:
        state = open_state(
            self.url,
            answer_delay=self.answer_delay,
            brain=self.brain,
            block_chars=self.block_chars,
        )
        state.thinker.start()  # in the worker, after the fork: asks are answered off requests
        return EngineApp(state, token=self.token, control=self.control)


def serve(
    *,
    host: str,
    port: int,
    url: str,
    token: str,
    control: bool,
    threads: int = 8,
    workers: int = 1,
    answer_delay: float = 1.0,
    brain: BrainClient | None = None,
    block_chars: int = DEFAULT_BLOCK_CHARS,
) -> None:
    """Serve the engine until stopped (SIGTERM or Ctrl-C); asks, briefs and curation are thought
    through ``brain`` (none: they say the door is not configured); every block is rendered within
    ``block_chars`` (:mod:`.block_budget`)."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "keepalive": 5,
        "graceful_timeout": 5,
        "accesslog": None,
        "loglevel": "warning",
        "proc_name": "pippa-memory-engine",
        # gunicorn's control socket is a fixed path in the home folder: two sites would clash.
        "control_socket_disable": True,
    }
    EngineService(
        url=url,
        token=token,
        control=control,
        answer_delay=answer_delay,
        brain=brain or BrainClient("", ""),
        options=options,
        block_chars=block_chars,
    ).run()
