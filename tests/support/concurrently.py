"""The same work in several threads at once, for the tests of what two processes doing it together
must still get right. Each thread closes its own database connection when done."""

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection

T = TypeVar("T")


def in_threads(
    work: Callable[[threading.Barrier], T], *, threads: int = 2, timeout: float = 30
) -> tuple[list[T], list[BaseException]]:
    """Run ``work`` in ``threads`` threads; each is handed one barrier they all share, to wait on
    at the point they must reach together. What the threads returned (in the order they
    finished), and what any of them raised."""
    start = threading.Barrier(threads)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(work(start))
        except BaseException as exc:  # pragma: no cover - reported to the test
            errors.append(exc)
        finally:
            connection.close()

    running = [threading.Thread(target=run) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=timeout)
    return results, errors
