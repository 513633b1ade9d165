"""A provider on loopback that answers the brain door's ``decide`` role as a reader would: an
OpenAI-compatible ``/v1/chat/completions`` endpoint (llama.cpp's shape, :class:`OpenAICompatibleKit`)
in a thread of its own, for the tests and the benchmark that run the site's door in another
process (where ``responses`` cannot reach).

``reader(older, newer)`` gives ``(choice, confidence, reason)`` for the two memory texts the
engine's decide question carries in its context; ``delay`` holds each answer back and ``fail``
answers 500, as a slow or broken provider would. Every request body is kept (``requests``), so a
test can say what was put before the door.
"""

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from provider_doubles.openai import OpenAICompatibleKit

OLDER = re.compile(r"Older memory \(kept [^)]*\): (.*)")
NEWER = re.compile(r"Newer memory \(kept [^)]*\): (.*)")
Reader = Callable[[str, str], tuple[str, float, str]]


def contexts(request: dict[str, Any]) -> str:
    """The decide inputs' ``context`` in a request's messages (the door sends its input as JSON)."""
    found = []
    for message in request.get("messages", []):
        content = message.get("content", "")
        parts = content if isinstance(content, list) else [{"text": content}]
        for part in parts:
            text = part.get("text", "") if isinstance(part, dict) else str(part)
            try:
                sent = json.loads(text)
            except ValueError:
                continue
            if isinstance(sent, dict) and isinstance(sent.get("input"), dict):
                found.append(str(sent["input"].get("context", "")))
    return "\n".join(found)


def two_memories(request: dict[str, Any]) -> tuple[str, str]:
    """The older and the newer memory's texts in a decide request's messages."""
    text = contexts(request)
    older, newer = OLDER.search(text), NEWER.search(text)
    return (older.group(1) if older else "", newer.group(1) if newer else "")


class DecidingProvider(threading.Thread):
    """The provider double; ``base_url`` for the vessel, ``calls`` answered so far."""

    def __init__(self, reader: Reader) -> None:
        super().__init__(daemon=True)
        self.reader, self.delay, self.fail = reader, 0.0, False
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                with provider.lock:
                    provider.requests.append(request)
                time.sleep(provider.delay)
                if provider.fail:
                    self.respond(500, {"error": {"message": "the model crashed", "type": "server"}})
                    return
                choice, confidence, reason = provider.reader(*two_memories(request))
                text = json.dumps({"choice": choice, "confidence": confidence, "reason": reason})
                self.respond(200, OpenAICompatibleKit().text_body(text))

            def respond(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.requests)

    def seen(self) -> str:
        """Everything every request carried, as one text."""
        with self.lock:
            return "\n".join(json.dumps(r) for r in self.requests)

    def run(self) -> None:
        self.server.serve_forever(poll_interval=0.1)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
