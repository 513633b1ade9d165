"""Turn-event delivery to the reference engine: events per second, and how long a backlog takes
to drain once the engine comes back.

    .venv/bin/python bench/outbox.py [--events 10000] [--workers 2]
"""

import argparse
import threading
import time

from _setup import configure_memory, household, setup_django


def make_backlog(h: dict, count: int) -> None:
    """``count`` committed turn events (one per assistant row), as a day of chat would leave."""
    from django.db import transaction

    from webui.models import Conversation, Message

    conversation = Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=h["user"])
    batch = 500
    for start in range(0, count, batch):
        with transaction.atomic():
            for index in range(start, min(count, start + batch)):
                Message.objects.create(
                    conversation=conversation,
                    role="assistant",
                    content=f"reply {index}",
                    vessel=h["vessel"],
                    tool_uses=[
                        {
                            "id": f"c{index}",
                            "name": "memory",
                            "input": {"verb": "remember", "text": f"fact {index}"},
                            "output": {},
                        }
                    ],
                )


def drain(workers: int) -> float:
    """Deliver every due event with ``workers`` threads; seconds taken."""
    from django.db import connection
    from django.utils import timezone

    from pippa_memory.delivery import deliver_turn_event
    from pippa_memory.models import OutboxEvent

    OutboxEvent.objects.filter(status="pending").update(next_attempt_at=timezone.now())
    ids = [
        str(i) for i in OutboxEvent.objects.filter(status="pending").values_list("id", flat=True)
    ]
    chunks = [ids[n::workers] for n in range(workers)]

    def work(chunk: list[str]) -> None:
        try:
            for event_id in chunk:
                deliver_turn_event(event_id)
        finally:
            connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    setup_django()
    from pippa_memory.models import OutboxEvent
    from pippa_memory.reference_engine import ReferenceEngine

    h = household()
    engine = ReferenceEngine(token="bench-token").start()
    configure_memory(ENABLED=True, URL=engine.url, BREAKER_FAIL_MAX=10**9)

    engine.set_fault("down")
    started = time.perf_counter()
    make_backlog(h, args.events)
    written = time.perf_counter() - started
    failed_once = drain(args.workers)  # every attempt fails while the engine is down
    engine.reset()

    seconds = drain(args.workers)
    delivered = OutboxEvent.objects.filter(status="delivered").count()
    unique = len(engine.state.events)
    print(
        f"Backlog of {args.events} turn events written in {written:.1f} s ({args.events / written:.0f}/s)"
    )
    print(f"  while the engine was down, one failed attempt each took {failed_once:.1f} s")
    print(
        f"Engine back: drained in {seconds:.1f} s with {args.workers} delivery workers: "
        f"{delivered / seconds:.0f} events/s; delivered {delivered}, recorded once each at the "
        f"engine: {unique == delivered == args.events}"
    )
    engine.stop()


if __name__ == "__main__":
    main()
