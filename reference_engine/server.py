"""The reference engine in this process, on a real loopback socket, for tests and benches.

A threaded WSGI server from the standard library (:mod:`wsgiref`) serves the same
:class:`~.app.EngineApp` that gunicorn serves in production (:mod:`.service`). It hands the app
each request's socket (``engine.socket``), so connection-level fault modes can close or reset it,
and writes nothing for a request whose connection the app dropped on purpose.
"""

import shutil
import sys
import tempfile
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

from reference_engine.app import EngineApp
from reference_engine.block_budget import DEFAULT_BLOCK_CHARS
from reference_engine.brain_client import BrainClient
from reference_engine.faults import MODES
from reference_engine.state import EngineState
from reference_engine.storage.database import Database


class EngineServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up, or a connection a fault closed, is normal; else printed."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class QuietServerHandler(ServerHandler):
    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None):
        """wsgiref refuses hop-by-hop headers from an app; the ``Connection: close`` the app
        sends gunicorn with a dropped connection means nothing here (nothing is written)."""
        kept = [(name, value) for name, value in headers if name.lower() != "connection"]
        return super().start_response(status, kept, exc_info)

    def finish_response(self) -> None:
        if self.environ.get("engine.dropped"):
            self.close()  # the app closed the connection on purpose: nothing is written
            return
        super().finish_response()


class EngineRequestHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: tests and benches read ``/_control/requests`` instead."""

    def handle(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536 or not self.parse_request():
            return
        environ = self.get_environ()
        environ["engine.socket"] = self.connection
        handler = QuietServerHandler(
            self.rfile, self.wfile, self.get_stderr(), environ, multithread=True
        )
        handler.request_handler = self  # type: ignore[attr-defined] - wsgiref's own hook
        handler.run(self.server.get_app())  # type: ignore[attr-defined]


class ReferenceEngine:
    """The reference engine on a real socket, in a background thread.

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
        block_chars: int = DEFAULT_BLOCK_CHARS,
    ) -> None:
        self.scratch = None if database else Path(tempfile.mkdtemp(prefix="engine-"))
        self.database = Database(database or str(self.scratch / "engine.sqlite3"))
        self.state = EngineState(
            self.database, answer_delay=answer_delay, brain=brain, block_chars=block_chars
        )
        # The tests read what this engine received (:attr:`received`), door or no door.
        self.app = EngineApp(self.state, token=token, control=control, log_requests=True)
        self.server = EngineServer((host, port), EngineRequestHandler)
        self.server.set_app(self.app)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

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
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.state.thinker.start()
        return self

    def stop(self) -> None:
        self.app.faults.clear()
        self.state.thinker.stop()
        self.server.shutdown()
        self.server.server_close()
        if self.thread is not None:
            self.thread.join(timeout=5)
        self.database.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def set_fault(self, mode: str, **options: Any) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        self.app.faults.set({"mode": mode, **options})

    def reset(self, *, state: bool = False) -> None:
        self.app.faults.clear()
        if state:
            self.state.clear()
            self.app.log.clear()
