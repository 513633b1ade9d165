"""Turn-event delivery through the real worker process, against a raw ``requests`` loop.

The reference engine runs in its own process (``python -m reference_engine``), the delivery processes
run as the ``Procfile`` states them (:data:`WORKER_COMMANDS`: today ``memory_outbox deliver``, whose
threads claim due outbox rows), on the bench's database. Each round, interleaved:

- **worker**: the workers are warmed up (one event delivered), paused (SIGSTOP), ``--events``
  assistant rows are committed the normal way (each writes its turn event), the workers are
  resumed (SIGCONT) and the clock runs until every one of those events is delivered;
- **raw**: the same payloads (new event ids) posted with one ``requests.Session().post`` loop to
  the same engine, with the same headers, as many loops at once as the worker has delivery
  threads (:func:`concurrency`).

Afterwards the engine's request log is read to check that it recorded every event of both arms
once. The figure is raw time / worker time (target at least 0.8).

    .venv/bin/python bench/outbox.py [--database sqlite|postgres] [--events 500] [--rounds 3]
"""

import os
import signal
import time
import uuid
from typing import Any

import requests
from _processes import (
    TOKEN,
    Spec,
    delivery_processes,
    engine_command,
    free_port,
    production_environment,
    running,
)
from _report import figure
from _setup import (
    arguments,
    at_once,
    backend_name,
    configure_memory,
    household,
    median,
    setup_django,
)

#: The processes that deliver turn events, name to command: the Procfile's, so the bench runs what
#: production runs. Change this one line if delivery moves to another command.
WORKER_COMMANDS: dict[str, str] = delivery_processes()


def concurrency() -> int:
    """Deliveries in flight at once, for both arms: the worker's delivery threads
    (``PIPPA_MEMORY_OUTBOX_WORKER_THREADS``), so the raw arm runs as many loops."""
    from pippa_memory.conf import memory_settings

    return int(memory_settings.OUTBOX_WORKER_THREADS)


SECTION = "Turn-event delivery"


def commit_turn_events(h: dict[str, Any], count: int) -> list[str]:
    """``count`` assistant rows committed in one transaction, each writing its turn event as any
    turn does; the events' ids."""
    from django.db import transaction

    from pippa_memory.models import OutboxEvent
    from webui.models import Conversation, Message

    conversation = Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=h["user"])
    with transaction.atomic():
        messages = [
            Message.objects.create(
                conversation=conversation,
                role="assistant",
                content=f"reply {index}: the tea is in the blue tin, second shelf",
                vessel=h["vessel"],
                tool_uses=[
                    {
                        "id": f"c{index}",
                        "name": "memory",
                        "input": {"verb": "remember", "text": f"fact {index}"},
                        "output": {"status": "noted", "scope": "private"},
                    }
                ],
            )
            for index in range(count)
        ]
    ids = OutboxEvent.objects.filter(message_id__in=[m.id for m in messages]).values_list(
        "id", flat=True
    )
    return [str(i) for i in ids]


def undelivered(ids: list[str]) -> Any:
    """The events of ``ids`` not yet delivered, as a query the poll can run cheaply: the events of
    one commit share a conversation, so it is one lookup on its index (a poll naming every id
    would take a share of the two cores from the workers it is timing)."""
    from pippa_memory.models import OutboxEvent

    owners = set(OutboxEvent.objects.filter(pk__in=ids).values_list("conversation_id", flat=True))
    if len(owners) != 1:
        raise RuntimeError("the events to wait for are not one conversation's")
    events = OutboxEvent.objects.filter(conversation_id=owners.pop())
    if events.count() != len(ids):
        raise RuntimeError("their conversation holds other events than those to wait for")
    return events.exclude(status="delivered")


def wait_delivered(waiting: Any, processes: list[Any], *, seconds: float = 600) -> float:
    """Seconds until no event in ``waiting`` (:func:`undelivered`) is left (polled every 20 ms)."""
    started = time.perf_counter()
    while waiting.exists():
        if time.perf_counter() - started > seconds:
            raise RuntimeError(f"events still undelivered after {seconds:g} s")
        for process in processes:
            process.check_alive()
        time.sleep(0.02)
    return time.perf_counter() - started


def paused(processes: list[Any], pause: bool) -> None:
    for process in processes:
        os.kill(process.popen.pid, signal.SIGSTOP if pause else signal.SIGCONT)


def commit_while_paused(h: dict[str, Any], processes: list[Any], count: int) -> list[str]:
    """Commit ``count`` events with the workers paused. A worker paused inside its own short
    write (SQLite: it holds the one write lock) would block the commit for good, so the bench
    waits for the lock only briefly, resumes the workers and tries again."""
    from django.db import OperationalError, connection

    def lock_wait(milliseconds: int) -> None:
        if connection.vendor == "sqlite":
            connection.cursor().execute(f"PRAGMA busy_timeout={milliseconds}")

    lock_wait(500)
    try:
        for _ in range(50):
            paused(processes, True)
            try:
                return commit_turn_events(h, count)
            except OperationalError:  # nothing was committed
                paused(processes, False)
                time.sleep(0.1)
    finally:
        lock_wait(10_000)  # the settings' own wait
    raise RuntimeError("the workers kept the database locked; no round was run")


def worker_round(h: dict[str, Any], processes: list[Any], count: int) -> tuple[float, list[str]]:
    """Seconds the paused-then-resumed workers take to deliver ``count`` fresh events."""
    warm = undelivered(commit_turn_events(h, 1))
    wait_delivered(warm, processes, seconds=120)  # warm: booted and polling
    try:
        ids = commit_while_paused(h, processes, count)
        waiting = undelivered(ids)
    finally:
        started = time.perf_counter()
        paused(processes, False)
    wait_delivered(waiting, processes)
    return time.perf_counter() - started, ids


def raw_round(engine_url: str, payloads: list[dict[str, Any]]) -> tuple[float, list[str]]:
    """Seconds plain ``requests.Session().post`` loops take to post ``payloads`` (new ids),
    :func:`concurrency` loops at once, each with its own session."""
    from pippa_memory.engine.contract import CONTRACT_HEADER
    from webui.text.canonical import canonical_bytes

    bodies = []
    for payload in payloads:
        event_id = str(uuid.uuid4())
        bodies.append((event_id, canonical_bytes({**payload, "id": event_id})))
    failures: list[str] = []

    def post_all(share: list[tuple[str, bytes]]) -> None:
        session = requests.Session()
        for event_id, body in share:
            answer = session.post(
                f"{engine_url}/v1/events",
                data=body,
                headers={
                    "Accept": "application/json",
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {TOKEN}",
                    "X-Request-Id": uuid.uuid4().hex,
                    CONTRACT_HEADER[0]: CONTRACT_HEADER[1],
                    "Idempotency-Key": event_id,
                },
                timeout=(0.5, 10.0),
            )
            if answer.status_code >= 300:
                failures.append(f"{answer.status_code} {answer.text[:200]}")

    count = concurrency()
    seconds = at_once(post_all, [bodies[n::count] for n in range(count)])
    if failures:
        raise RuntimeError(f"the engine refused raw posts: {failures[:3]}")
    return seconds, [event_id for event_id, _ in bodies]


def recorded_once(engine_url: str, expected: list[str]) -> bool:
    """Whether the engine received each expected event once, then clears its log."""
    door = {"Authorization": f"Bearer {TOKEN}"}  # the control door asks for the token too
    log = requests.get(f"{engine_url}/_control/requests", headers=door, timeout=30)
    keys = [
        r["headers"].get("Idempotency-Key")
        for r in log.json()["requests"]
        if r["path"] == "/v1/events"
    ]
    wanted = set(expected)
    seen = [key for key in keys if key in wanted]
    requests.post(f"{engine_url}/_control/reset", json={"state": True}, headers=door, timeout=10)
    return len(seen) == len(wanted) == len(set(seen))


def main() -> None:
    args = arguments(__doc__.splitlines()[0], events=(500, 40), rounds=(3, 1))
    database_url = setup_django(database=args.database, label="outbox")
    port = free_port()
    engine_url = f"http://127.0.0.1:{port}"
    configure_memory(ENABLED=True, URL=engine_url)
    h = household()
    env = production_environment(database_url, PIPPA_MEMORY_URL=engine_url)
    workers = [Spec(name, command) for name, command in WORKER_COMMANDS.items()]
    from pippa_memory.models import OutboxEvent

    worker_seconds, raw_seconds, all_once = [], [], True
    with (
        running([Spec("engine", engine_command(port), f"{engine_url}/_control/requests")], env),
        running(workers, env) as processes,
    ):
        for _ in range(args.rounds):
            seconds, ids = worker_round(h, processes, args.events)
            worker_seconds.append(seconds)
            payloads = list(
                OutboxEvent.objects.filter(id__in=ids).values_list("payload", flat=True)
            )
            seconds, raw_ids = raw_round(engine_url, payloads)
            raw_seconds.append(seconds)
            all_once = recorded_once(engine_url, ids + raw_ids) and all_once
    report(args, worker_seconds, raw_seconds, all_once)


def report(args: Any, worker: list[float], raw: list[float], all_once: bool) -> None:
    backend = backend_name(args.database)
    ratios = [r / w for r, w in zip(raw, worker, strict=True)]
    ratio = median(ratios)
    events = args.events
    figure(
        f"outbox delivery vs raw requests loop, {backend}",
        f"{ratio:.2f} ({events / median(worker):.0f} vs {events / median(raw):.0f} events/s)",
        target="at least 0.80",
        met=ratio >= 0.8,
        what=(
            f"{events} committed turn events delivered by the Procfile's delivery processes "
            f"({', '.join(WORKER_COMMANDS)}; paused while the events were written, timed from "
            f"resume to the last delivered) against {concurrency()} requests.Session().post loops "
            f"at once (as many as the worker's delivery threads) posting the same payloads to the "
            f"same engine process; raw time / "
            f"worker time, median of {args.rounds} interleaved rounds"
        ),
        section=SECTION,
    )
    figure(
        f"outbox events recorded by the engine once each, {backend}",
        "yes" if all_once else "no",
        target="every event once",
        met=all_once,
        what="the engine's request log checked for each event id of both arms, every round",
        section=SECTION,
    )


if __name__ == "__main__":
    main()
