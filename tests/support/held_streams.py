"""A streamed reply read over a real socket in a thread of its own, for the tests that hold many
replies open against a running server, or stop the server under them."""

import json
import threading
import time
from typing import Any

import requests


class HeldStream(threading.Thread):
    """One streamed reply to ``text``, read to its end: its events in order (name, data);
    ``writing`` is set at its first delta, ``ended`` when the stream closed."""

    def __init__(self, url: str, headers: dict[str, str], text: str) -> None:
        super().__init__(daemon=True)
        self.url, self.headers, self.text = url, headers, text
        self.writing, self.ended = threading.Event(), threading.Event()
        self.events: list[tuple[str, Any]] = []
        self.status: int | None = None
        self.failure: Any = None

    def run(self) -> None:
        try:
            self.read()
        except Exception as exc:  # reported by the test, not lost in this thread
            self.failure = exc
        finally:
            self.ended.set()

    def read(self) -> None:
        with requests.post(
            self.url, json={"text": self.text}, headers=self.headers, stream=True, timeout=120
        ) as response:
            self.status = response.status_code
            if self.status != 200:
                self.events.append(("refused", response.text[:500]))
                return
            name = None
            for line in response.iter_lines(decode_unicode=True):
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: ") and name is not None:
                    self.events.append((name, json.loads(line.removeprefix("data: "))))
                    if name == "delta":
                        self.writing.set()

    def started(self, timeout: float) -> bool:
        """Whether the reply started being written within ``timeout`` (False at once if the
        stream ended before that)."""
        deadline = time.monotonic() + timeout
        while not self.writing.wait(0.1):
            if self.ended.is_set() or time.monotonic() > deadline:
                return self.writing.is_set()
        return True

    def last(self) -> tuple[str, Any] | None:
        return self.events[-1] if self.events else None
