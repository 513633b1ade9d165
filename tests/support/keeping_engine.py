"""A small stand-in engine over real HTTP that speaks contract version 3's *keep in every chat*
and ``left_out``, for the plug-in's tests until the reference engine's bounded block is merged.

It keeps one soul's items in memory and answers the calls the memory page and its API make:
the head (a block holding what is kept, then the newest, at most ``holds`` items, with
``left_out``), the listing, one item, the item's PATCH (``scope`` and ``keep``) and the members'
counts; every other path is ``404``. Each request is logged with its body, as the reference
engine's control door logs them. Visibility is the contract's: household items, plus the viewer's
own private ones.
"""

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs, urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

Response = tuple[int, dict[str, Any]]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:  # no access log on the test's output
        pass


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


@dataclass
class KeepingEngine:
    """The stand-in: ``add`` items, ``start`` it, point ``PIPPA_MEMORY_URL`` at ``url``."""

    token: str
    soul: str = "pippa"
    holds: int = 2
    items: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    revision: int = 1
    url: str = ""

    def add(
        self, text: str, *, scope: str = "household", by: Any = None, keep: bool = False
    ) -> str:
        """Add an item said by the user ``by`` (None: an unattended run); the head moves."""
        said_by = None
        if by is not None:
            said_by = {"member": str(by.pk), "name": by.get_full_name() or by.get_username()}
        item_id = f"k{uuid.uuid4().hex[:10]}"
        at = f"2026-12-{1 + len(self.items) % 28:02d}T09:{len(self.items) % 60:02d}:00Z"
        source = {"conversation": None, "message": None, "tool_use": None}
        self.items.append(
            {"id": item_id, "text": text, "at": at, "scope": scope, "said_by": said_by}
            | {"source": source, "keep": keep}
            | {"supersedes": None, "superseded_by": None, "decision": None}
        )
        self.revision += 1
        return item_id

    def start(self) -> "KeepingEngine":
        self._server = make_server(
            "127.0.0.1", 0, self.app, server_class=ThreadingServer, handler_class=QuietHandler
        )
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- what a viewer sees ----------------------------------------------------------------------
    def visible(self, viewer: str | None) -> list[dict[str, Any]]:
        """The items ``viewer`` may see, newest first."""
        seen = [
            item
            for item in self.items
            if item["scope"] == "household" or (item["said_by"] or {}).get("member") == viewer
        ]
        return list(reversed(seen))

    def chosen(self, viewer: str | None) -> list[dict[str, Any]]:
        """What a block holds: kept items first, then the newest, at most ``holds``."""
        visible = self.visible(viewer)
        kept = [item for item in visible if item["keep"]]
        rest = [item for item in visible if not item["keep"]]
        return (kept + rest)[: max(self.holds, len(kept))]

    # -- the wire --------------------------------------------------------------------------------
    def app(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        body = json.loads(raw) if raw else None
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        self.received.append({"method": method, "path": path, "query": query, "body": body})
        if environ.get("HTTP_AUTHORIZATION") != f"Bearer {self.token}":
            status, response = 401, error("unauthorized", "Bearer token required.")
        else:
            status, response = self.respond(method, urlsplit(path).path, query, body)
        payload = json.dumps(response).encode()
        start_response(
            f"{status} X",
            [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))],
        )
        return [payload]

    def respond(
        self, method: str, path: str, query: dict[str, str], body: dict[str, Any] | None
    ) -> Response:
        viewer = query.get("viewer") or None
        base = f"/v1/souls/{self.soul}"
        revision = f"r{self.revision}"
        if method == "GET" and path == f"{base}/head":
            return 200, self.head(viewer)
        if method == "GET" and path == f"{base}/items":
            words = query.get("q", "").lower().split()
            found = [i for i in self.visible(viewer) if all(w in i["text"].lower() for w in words)]
            limit = int(query.get("limit", "20"))
            return 200, {"items": found[:limit], "next": None, "revision": revision}
        if method == "GET" and path == f"{base}/members":
            return 200, {"members": [], "revision": revision}
        if path.startswith(f"{base}/items/"):
            return self.one_item(method, path.rsplit("/", 1)[-1], viewer, body)
        return 404, error("not_found", "No such route here.")

    def head(self, viewer: str | None) -> dict[str, Any]:
        chosen = self.chosen(viewer)
        left_out = len(self.visible(viewer)) - len(chosen)
        lines = [f"- {item['text']}" for item in chosen]
        lines.append(f"({left_out} more memories are left out; recall finds them.)")
        return {
            "soul": self.soul,
            "revision": f"r{self.revision}",
            "viewer": viewer,
            "block": "What I remember:\n" + "\n".join(lines),
            "items": [item["id"] for item in chosen],
            "left_out": left_out,
        }

    def one_item(
        self, method: str, item_id: str, viewer: str | None, body: dict[str, Any] | None
    ) -> Response:
        if method == "PATCH":
            viewer = (body or {}).get("viewer")
        item = next((i for i in self.visible(viewer) if i["id"] == item_id), None)
        if item is None:
            return 404, error("not_found", "No such item for this viewer.")
        if method == "PATCH":
            changes = {k: v for k, v in (body or {}).items() if k in ("scope", "keep")}
            if changes and any(item[k] != v for k, v in changes.items()):
                item.update(changes)
                self.revision += 1
        elif method != "GET":
            return 405, error("method_not_allowed", "Not here.")
        return 200, {"item": item, "revision": f"r{self.revision}"}


def error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def serving(engine: KeepingEngine, configure: Callable[..., Any]) -> Iterator[KeepingEngine]:
    """``engine`` started, with the plug-in's settings pointed at it (``configure`` is the
    plug-in's settings fixture), until the test is done: for a fixture to ``yield from``."""
    engine.start()
    configure(URL=engine.url)
    yield engine
    engine.stop()
