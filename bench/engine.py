"""The reference engine on its own database: recall p50/p95 over HTTP at 1,000, 10,000 and
100,000 memories, side by side with a bare full-text query on the same rows from the same process
(the floor, as a ratio); event ingest per second against a raw loop posting to the same server;
and start-up time (process start to first answer) with the largest database.

    .venv/bin/python bench/engine.py [--database sqlite|postgres] [--quick]
"""

import atexit
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import requests
from _report import figure
from _setup import POSTGRES_SERVER, ROOT, arguments, backend_name, median, percentile

TOKEN = "bench-engine-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": "3"}
SECTION = "Reference engine"
WORDS = [f"w{n:04d}" for n in range(3000)]


def engine_database(database: str) -> str:
    """A new, empty engine database: a SQLite file, or a PostgreSQL database dropped at exit."""
    if database == "sqlite":
        folder = tempfile.mkdtemp(prefix="bench-engine-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return os.path.join(folder, "engine.sqlite3")
    import psycopg

    name = f"bench_engine_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    atexit.register(drop)
    return f"{POSTGRES_SERVER}/{name}"


def fill(url: str, count: int, rng: random.Random) -> None:
    """``count`` household memories of eight words each, written straight into the tables."""
    from reference_engine.state import EngineState
    from reference_engine.storage.database import Database
    from reference_engine.storage.memories import add_memory

    state = EngineState(Database(url))
    done = 0
    while done < count:
        with state.database.write() as cursor:
            for _ in range(min(5000, count - done)):
                text = " ".join(rng.choice(WORDS) for _ in range(8))
                add_memory(cursor, "pippa", text=text, scope="household", said_by=None, source={})
                done += 1
    state.database.close()


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def start_engine(url: str) -> tuple[subprocess.Popen[bytes], str, float]:
    """``manage.py memory_engine`` on ``url``; the process, its address, and seconds to answer."""
    port = free_port()
    command = [sys.executable, "manage.py", "memory_engine", "--port", str(port)]
    command += ["--token", TOKEN, "--database", url, "--threads", "4"]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    address = f"http://127.0.0.1:{port}"
    while True:
        try:
            requests.get(f"{address}/v1/souls/pippa/head?viewer=1", headers=HEADERS, timeout=30)
            return process, address, time.perf_counter() - started
        except requests.ConnectionError:
            if process.poll() is not None:
                raise SystemExit("the engine did not start") from None
            time.sleep(0.02)


def bare_query(url: str, postgres: bool) -> Any:
    """The floor: one full-text query for three words, the index's own order, limit 5."""
    if postgres:
        import psycopg

        connection = psycopg.connect(url, autocommit=True)
        sql = (
            "SELECT seq FROM engine_items, plainto_tsquery('simple', %s) q "
            "WHERE tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT 5"
        )
        return lambda words: connection.execute(sql, [" | ".join(words)]).fetchall()
    import sqlite3

    connection = sqlite3.connect(url)
    sql = "SELECT rowid FROM engine_items_fts WHERE engine_items_fts MATCH ? ORDER BY bm25(engine_items_fts) LIMIT 5"
    return lambda words: connection.execute(sql, [" OR ".join(words)]).fetchall()


def timed(call: Any, rounds: int, rng: random.Random) -> list[float]:
    samples = []
    for _ in range(rounds):
        words = [rng.choice(WORDS) for _ in range(3)]
        started = time.perf_counter()
        call(words)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def measure_recall(database: str, size: int, rounds: int, rng: random.Random) -> float:
    """Recall p50/p95 at ``size`` memories, beside the floor; the start-up seconds."""
    url = engine_database(database)
    fill(url, size, rng)
    process, address, startup = start_engine(url)
    session = requests.Session()

    def recall(words: list[str]) -> None:
        body = {"soul": "pippa", "query": " ".join(words), "viewer": "1", "limit": 5}
        answer = session.post(f"{address}/v1/recall", json=body, headers=HEADERS, timeout=30)
        assert answer.status_code == 200, answer.text

    try:
        timed(recall, 10, rng)  # warm both sides
        over_http = timed(recall, rounds, rng)
        floor = bare_query(url, database == "postgres")
        timed(floor, 10, rng)
        bare = timed(floor, rounds, rng)
    finally:
        process.terminate()
        process.wait(timeout=30)
    backend = backend_name(database)
    p95, floor95 = percentile(over_http, 0.95), percentile(bare, 0.95)
    what = f"{rounds} recalls of three random words over HTTP, {backend}, {size:,} memories"
    figure(
        f"Recall p50 / p95 at {size:,} memories ({backend})",
        f"{median(over_http):.1f} / {p95:.1f} ms (floor {median(bare):.1f} / {floor95:.1f} ms, "
        f"{p95 / max(floor95, 0.001):.1f}x)",
        target="p95 at most 20 ms at 100,000" if size >= 100_000 else "",
        met=(p95 <= 20) if size >= 100_000 else None,
        what=what + "; the floor is a bare full-text query on the same rows from this process",
        section=SECTION,
    )
    return startup


def measure_ingest(database: str, events: int) -> None:
    """Turn events a second, one client with keep-alive, against a raw loop to the same server."""
    url = engine_database(database)
    process, address, _ = start_engine(url)
    session = requests.Session()
    try:
        started = time.perf_counter()
        for number in range(events):
            event = turn_event(number)
            sent = {**HEADERS, "Idempotency-Key": event["id"]}
            answer = session.post(f"{address}/v1/events", json=event, headers=sent, timeout=30)
            assert answer.status_code == 202, answer.text
        rate = events / (time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(events):
            session.post(f"{address}/v1/nothing", json={}, headers=HEADERS, timeout=30)
        raw = events / (time.perf_counter() - started)
    finally:
        process.terminate()
        process.wait(timeout=30)
    figure(
        f"Event ingest ({backend_name(database)})",
        f"{rate:.0f} events/s (raw loop to the same server {raw:.0f} req/s)",
        target="at least 300 events/s",
        met=rate >= 300,
        what=f"{events} turn events, each remembering one thing, posted one after another",
        section=SECTION,
    )


def turn_event(number: int) -> dict[str, Any]:
    use = {"id": "c1", "name": "memory", "input": {"verb": "remember", "text": f"fact {number}"}}
    return {
        "type": "conversation.turn",
        "id": str(uuid.uuid4()),
        "occurred_at": "2026-12-03T09:00:00Z",
        "soul": "pippa",
        "conversation": {
            "id": "c1",
            "pinned_head": None,
            "viewer": None,
            "vessel": "offline",
            "kind": "job",
        },
        "message": {
            "id": f"m{number}",
            "role": "assistant",
            "created_at": "2026-12-03T09:00:00Z",
            "content": "Noted.",
            "tool_uses": [{**use, "output": {"ok": True}, "scope": "household"}],
        },
    }


def main() -> None:
    args = arguments(__doc__ or "", rounds=(300, 20), events=(1000, 50))
    sizes = (200, 1000) if args.quick else (1_000, 10_000, 100_000)
    rng = random.Random(25)
    startup = 0.0
    for size in sizes:
        startup = measure_recall(args.database, size, args.rounds, rng)
    figure(
        f"Start-up at {sizes[-1]:,} memories ({backend_name(args.database)})",
        f"{startup:.2f} s",
        target="under 2 s",
        met=startup < 2,
        what="manage.py memory_engine started to its first answer (Django and gunicorn included)",
        section=SECTION,
    )
    measure_ingest(args.database, args.events)


if __name__ == "__main__":
    main()
