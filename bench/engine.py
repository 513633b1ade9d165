"""The reference engine on its own database: recall p50/p95 over HTTP at 1,000, 10,000 and
100,000 memories, side by side with a bare full-text query on the same rows from the same process
(the floor, as a ratio); turn events ingested a second over HTTP against a raw loop posting the
same requests to the same server; and start-up time (process start to first answer) with the
largest database.

Memories are seeded straight into the engine's database through its storage module (one bulk
insert, not an HTTP post each), so 100,000 of them take seconds.

    .venv/bin/python bench/engine.py [--database sqlite|postgres] [--quick] [--clients N]

``--clients`` (default 2, as many as the delivery worker's threads by default,
``PIPPA_MEMORY_OUTBOX_WORKER_THREADS``) is how many loops post at once in both ingest arms.
"""

import atexit
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _events import remember_event
from _processes import cpu_seconds, free_port
from _report import figure
from _setup import (
    POSTGRES_SERVER,
    ROOT,
    arguments,
    at_once,
    backend_name,
    median,
    percentile,
)

TOKEN = "bench-engine-token"
HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "X-Memory-Contract": "3",
    "Content-Type": "application/json",
}
SECTION = "Reference engine"
WORDS = [f"w{n:04d}" for n in range(3000)]
#: Where the raw loop posts: a path the engine answers (404) after the same token check and body
#: parsing as an event, without touching its database.
RAW_PATH = "/v1/no-such-route"
Query = Callable[[list[str]], Any]


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
    """``count`` household memories of eight words each, bulk-inserted through the engine's
    storage module; PostgreSQL's statistics are then gathered, as autovacuum would."""
    from reference_engine.state import EngineState
    from reference_engine.storage.database import Database
    from reference_engine.storage.memories import add_household_memories

    state = EngineState(Database(url))
    for start in range(0, count, 20_000):
        texts = [
            " ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(min(20_000, count - start))
        ]
        with state.database.write() as cursor:
            add_household_memories(cursor, "pippa", texts)
    if state.database.postgres:
        with state.database.write() as cursor:
            cursor.run("ANALYZE")
    state.database.close()


def post(
    connection: http.client.HTTPConnection, path: str, body: bytes, key: str | None = None
) -> int:
    """One POST on a kept-alive connection (``key``: its Idempotency-Key); the status, with
    the response read to the end."""
    headers = HEADERS if key is None else {**HEADERS, "Idempotency-Key": key}
    connection.request("POST", path, body, headers)
    response = connection.getresponse()
    response.read()
    return response.status


def start_engine(url: str) -> tuple[subprocess.Popen[bytes], int, float]:
    """``python -m reference_engine`` on ``url``; the process, its port, and the seconds from
    starting the process to its first answer (a recall)."""
    port = free_port()
    command = [sys.executable, "-m", "reference_engine", "--port", str(port)]
    command += ["--token", TOKEN, "--database", url, "--threads", "4"]
    probe = json.dumps({"soul": "pippa", "query": WORDS[0], "viewer": "1", "limit": 5}).encode()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            status = post(connection, "/v1/recall", probe)
            connection.close()
            if status != 200:
                raise SystemExit(f"the engine's first recall answered {status}")
            return process, port, time.perf_counter() - started
        except ConnectionError:
            if process.poll() is not None:
                raise SystemExit("the engine did not start") from None
            time.sleep(0.01)


def engine_cpu(process: subprocess.Popen[bytes]) -> float:
    """CPU seconds the engine (gunicorn's master and its worker) has used so far: what a request
    costs the engine itself, however busy the machine is (wall-clock times move with the load)."""
    return cpu_seconds(process.pid)


def engine_rss_mb(process: subprocess.Popen[bytes]) -> dict[str, float]:
    """Resident memory of the engine (gunicorn's master and its worker) in MiB, as proportional
    set sizes (``/proc/PID/smaps_rollup``), so the pages the two share (Python, its libraries)
    count once rather than twice: ``Pss`` in all, ``Pss_Anon`` (the processes' own) and
    ``Pss_File`` (file pages mapped in, among them the SQLite database the engine reads through a
    memory map, which the system may take back)."""
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text()
    kib = {"Pss": 0, "Pss_Anon": 0, "Pss_File": 0}
    for pid in [process.pid, *map(int, children.split())]:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name = line.split(":")[0]
            if name in kib:
                kib[name] += int(line.split()[1])
    return {name: value / 1024 for name, value in kib.items()}


def stop_engine(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)


def bare_query(url: str, postgres: bool) -> Query:
    """The floor: one full-text query for the words (any of them), the index's own order and
    score (``ts_rank`` or BM25), limit 5, from this process."""
    if postgres:
        import psycopg

        connection = psycopg.connect(url, autocommit=True)
        sql = (
            "SELECT seq FROM engine_items, to_tsquery('simple', %s) q "
            "WHERE tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT 5"
        )
        return lambda words: connection.execute(sql, [" | ".join(words)]).fetchall()
    import sqlite3

    connection = sqlite3.connect(url)
    sql = (
        "SELECT rowid FROM engine_items_fts WHERE engine_items_fts MATCH ? "
        "ORDER BY bm25(engine_items_fts) LIMIT 5"
    )
    return lambda words: connection.execute(sql, [" OR ".join(words)]).fetchall()


def interleaved(arms: list[Query], rounds: int, rng: random.Random) -> list[list[float]]:
    """Milliseconds of each arm, round by round on the same three random words."""
    samples: list[list[float]] = [[] for _ in arms]
    for _ in range(rounds):
        words = [rng.choice(WORDS) for _ in range(3)]
        for arm, kept in zip(arms, samples, strict=True):
            started = time.perf_counter()
            arm(words)
            kept.append((time.perf_counter() - started) * 1000)
    return samples


def at_largest(size: int, target: str, met: bool) -> dict[str, Any]:
    """A figure's ``target`` and whether it was ``met``, at the largest size only (100,000
    memories); a smaller size is reported as measured."""
    largest = size >= 100_000
    return {"target": target if largest else "", "met": met if largest else None}


def measure_recall(
    database: str, size: int, rounds: int, rng: random.Random
) -> tuple[float, float]:
    """Recall p50/p95 at ``size`` memories beside the floor; returns the start-up seconds, and
    the CPU seconds the engine used to get there."""
    url = engine_database(database)
    fill(url, size, rng)
    process, port, startup = start_engine(url)
    startup_cpu = engine_cpu(process)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def recall(words: list[str]) -> None:
        body = {"soul": "pippa", "query": " ".join(words), "viewer": "1", "limit": 5}
        status = post(connection, "/v1/recall", json.dumps(body).encode())
        assert status == 200, status

    try:
        floor = bare_query(url, database == "postgres")
        interleaved([recall, floor], 20, rng)  # warm both sides
        cpu = engine_cpu(process)
        over_http, bare = interleaved([recall, floor], rounds, rng)
        cpu = (engine_cpu(process) - cpu) / rounds * 1000
        resident = engine_rss_mb(process)
        measure_blocks(connection, database, size, rounds)
    finally:
        connection.close()
        stop_engine(process)
    backend = backend_name(database)
    p95, floor95 = percentile(over_http, 0.95), percentile(bare, 0.95)
    figure(
        f"Recall p50 / p95 at {size:,} memories ({backend})",
        f"{median(over_http):.1f} / {p95:.1f} ms (floor {median(bare):.1f} / {floor95:.1f} ms; "
        f"p95 {p95 / max(floor95, 0.001):.1f}x the floor; engine CPU {cpu:.1f} ms a recall)",
        **at_largest(size, "p95 at most 20 ms", p95 <= 20),
        what=f"{rounds} recalls of three random words (of {len(WORDS):,}; memories of eight) "
        f"over HTTP with keep-alive, meaning on (words and meaning fused, as the engine answers "
        f"by default), {backend}, {size:,} memories, interleaved with the floor: "
        "a bare full-text query for the same words on the same rows from the bench's process; "
        "engine CPU is what gunicorn's processes used (PostgreSQL's own work not included)",
        section=SECTION,
    )
    figure(
        f"Engine resident memory at {size:,} memories ({backend})",
        f"{resident['Pss']:.0f} MiB ({resident['Pss_Anon']:.0f} MiB its own, "
        f"{resident['Pss_File']:.0f} MiB file pages mapped in)",
        **at_largest(size, "under 300 MiB", resident["Pss"] < 300),
        what="proportional set size of gunicorn's master and its worker after the recalls "
        "(pages they share counted once), meaning on: the WordLlama model and the soul's int8 "
        f"vectors with their sign bits in memory; {backend}",
        section=SECTION,
    )
    return startup, startup_cpu


def get(connection: http.client.HTTPConnection, path: str) -> dict[str, Any]:
    """One GET on a kept-alive connection; its JSON answer (which must be a 200)."""
    connection.request("GET", path, headers=HEADERS)
    answer = connection.getresponse()
    body = answer.read()
    if answer.status != 200:
        raise SystemExit(f"GET {path} answered {answer.status}: {body[:200]!r}")
    return json.loads(body)


def timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def measure_blocks(
    connection: http.client.HTTPConnection, database: str, size: int, rounds: int
) -> None:
    """Head and block p50/p95 over HTTP at ``size`` memories: the head as pinned again (its
    selection stored), the head just after a remember (a new revision: its selection chosen
    then, from indexes, never a read of every memory), and a past revision's block."""
    head = "/v1/souls/pippa/head?viewer=1"
    pinned = get(connection, head)  # the first block of a viewer counts its memories once
    past = f"/v1/souls/pippa/blocks/{pinned['revision']}?viewer=1"
    arms: dict[str, list[float]] = {"stored": [], "changed": [], "past": []}
    for number in range(rounds):
        arms["stored"].append(timed(lambda: get(connection, head)))
        event = turn_event(size * 10 + number)
        post(connection, "/v1/events", json.dumps(event).encode(), event["id"])
        arms["changed"].append(timed(lambda: get(connection, head)))
        arms["past"].append(timed(lambda: get(connection, past)))
    names = {
        "stored": "Head p50 / p95",
        "changed": "Head after a remember p50 / p95",
        "past": "Past block p50 / p95",
    }
    for arm, samples in arms.items():
        p95 = percentile(samples, 0.95)
        figure(
            f"{names[arm]} at {size:,} memories ({backend_name(database)})",
            f"{median(samples):.1f} / {p95:.1f} ms (block {len(pinned['block']):,} characters, "
            f"{pinned['left_out']:,} left out)",
            **at_largest(size, "p95 at most 10 ms", p95 <= 10),
            what=f"{rounds} GETs over HTTP with keep-alive, viewer 1, {size:,} memories: the "
            "head asked again (its selection stored), the head right after a remembered turn "
            "event (a new revision, chosen then), and the first head's revision asked as a past "
            "block, interleaved round by round",
            section=SECTION,
        )


def turn_event(number: int) -> dict[str, Any]:
    """A turn event whose reply remembered one thing (household) in a job, as the outbox sends
    it."""
    return remember_event(f"fact {number}", kind="job", conversation="c1", message=f"m{number}")


def post_all(port: int, path: str, events: list[dict[str, Any]], clients: int) -> float:
    """Post ``events`` to ``path`` from ``clients`` loops at once, each on its own kept-alive
    connection; the requests answered a second. Events must be acknowledged (202), and the raw
    path answers 404 without touching the database."""
    expected = 202 if path == "/v1/events" else 404
    shares = [events[n::clients] for n in range(clients)]
    failures: list[str] = []

    def loop(share: list[dict[str, Any]]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for event in share:
            status = post(connection, path, json.dumps(event).encode(), event["id"])
            if status != expected:
                failures.append(f"{path} answered {status}")
        connection.close()

    elapsed = at_once(loop, shares)
    if failures:
        raise SystemExit(failures[0])
    return len(events) / elapsed


def measure_ingest(database: str, events: int, clients: int) -> None:
    """Turn events a second against the raw loop, in five interleaved rounds (medians)."""
    url = engine_database(database)
    process, port, _ = start_engine(url)
    rounds, each = 5, max(1, events // 5)
    rates: list[float] = []
    raw: list[float] = []
    cpu = 0.0
    try:
        post_all(port, "/v1/events", [turn_event(n) for n in range(20)], clients)  # warm
        for number in range(rounds):
            batch = [turn_event(number * each + n) for n in range(each)]
            before = engine_cpu(process)
            rates.append(post_all(port, "/v1/events", batch, clients))
            cpu += engine_cpu(process) - before
            raw.append(post_all(port, RAW_PATH, batch, clients))
    finally:
        stop_engine(process)
    rate, floor = median(rates), median(raw)
    figure(
        f"Event ingest ({backend_name(database)})",
        f"{rate:.0f} turn events/s (raw loop to the same server {floor:.0f} req/s; "
        f"{rate / floor:.2f} of it; engine CPU {cpu / (rounds * each) * 1000:.1f} ms an event)",
        target="at least 300 turn events/s",
        met=rate >= 300,
        what=f"{rounds} rounds of {each} turn events, each remembering one thing, posted to "
        f"/v1/events by {clients} loops at once over kept-alive connections, each committed "
        "before its 202; interleaved with the raw loop: the same requests from the same loops "
        f"to {RAW_PATH}, which the engine answers (404) after the same token check and body "
        "parsing, without touching its database",
        section=SECTION,
    )


def main() -> None:
    args = arguments(__doc__ or "", rounds=(300, 20), events=(2000, 60), clients=(2, 2))
    sizes = (1_000,) if args.quick else (1_000, 10_000, 100_000)
    rng = random.Random(25)
    startup = cpu = 0.0
    for size in sizes:
        startup, cpu = measure_recall(args.database, size, args.rounds, rng)
    figure(
        f"Start-up at {sizes[-1]:,} memories ({backend_name(args.database)})",
        f"{startup:.2f} s (engine CPU {cpu:.2f} s)",
        target="under 2 s",
        met=startup < 2,
        what="`python -m reference_engine` (gunicorn and its worker, no Django) from starting the "
        "process to its first answered recall; engine CPU is what its processes used by then, "
        "which the machine's load does not move",
        section=SECTION,
    )
    measure_ingest(args.database, args.events, args.clients)


if __name__ == "__main__":
    main()
