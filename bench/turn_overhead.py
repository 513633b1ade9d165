"""Turn overhead of the memory layer on the offline vessel, in-process and over HTTP.

Prints the median time per turn for each arm, measured side by side (interleaved rounds) in one
run, the ratios to memory off, the first-turn cost with a hanging engine, and SQL queries per turn
at turns 1, 10, 100 and 200.

    .venv/bin/python bench/turn_overhead.py [--rounds 7] [--turns 30]
"""

import argparse
import threading
import time
from typing import Any

from _setup import closed_port_url, configure_memory, household, median, setup_django


def make_conversation(h: dict[str, Any]) -> Any:
    from webui.models import Conversation

    return Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=h["user"])


def time_turns(h: dict[str, Any], turns: int) -> float:
    """Seconds per turn, median over ``turns`` turns of one fresh conversation (first turn left out)."""
    from webui.turns import run_turn

    conversation = make_conversation(h)
    run_turn(conversation=conversation, text="hello")  # the first turn pins; measured separately
    samples = []
    for index in range(turns):
        started = time.perf_counter()
        run_turn(conversation=conversation, text=f"turn {index}: how is the garden?")
        samples.append(time.perf_counter() - started)
    return median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    setup_django()
    from pippa_memory.reference_engine import ReferenceEngine

    h = household()
    engine = ReferenceEngine(token="bench-token").start()
    engine.state.remember("pippa", "The tea is in the blue tin.")
    refused = closed_port_url()
    hanging = ReferenceEngine(token="bench-token").start()
    hanging.set_fault("hang", seconds=600)

    arms = {
        "memory off": {"ENABLED": False, "URL": engine.url},
        "memory on, engine up": {"ENABLED": True, "URL": engine.url},
        "engine refusing": {"ENABLED": True, "URL": refused},
        "engine hanging, breaker open": {"ENABLED": True, "URL": hanging.url},
    }
    results: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(args.rounds):
        for name, values in arms.items():
            configure_memory(**values)
            if name == "engine hanging, breaker open":
                from webui.turns import run_turn

                for _ in range(3):  # open the breaker: each first turn waits once, then no more
                    run_turn(conversation=make_conversation(h), text="hello")
            results[name].append(time_turns(h, args.turns))
    base = median(results["memory off"])
    print(
        f"In-process turn time, median of {args.rounds} rounds x {args.turns} turns (offline vessel)"
    )
    for name, values in results.items():
        print(
            f"  {name:32s} {median(values) * 1000:8.2f} ms   ratio to off {median(values) / base:5.2f}"
        )

    # First turn with the engine hanging and the breaker closed: bounded by the chat budget.
    from django.conf import settings

    from webui.turns import run_turn

    first: dict[str, list[float]] = {"memory off": [], "engine hanging (breaker closed)": []}
    for _ in range(args.rounds):
        for name, values in (
            ("memory off", {"ENABLED": False}),
            ("engine hanging (breaker closed)", {"ENABLED": True, "URL": hanging.url}),
        ):
            configure_memory(**values)
            conversation = make_conversation(h)
            started = time.perf_counter()
            run_turn(conversation=conversation, text="hello")
            first[name].append(time.perf_counter() - started)
    budget = settings.PIPPA_MEMORY["CHAT_BUDGET"]
    print(f"First turn (the pin), median of {args.rounds}; the chat budget is {budget:g} s")
    for name, values in first.items():
        print(f"  {name:32s} {median(values) * 1000:8.1f} ms")

    # SQL queries per turn.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    configure_memory(ENABLED=True, URL=engine.url)
    conversation = make_conversation(h)
    counts = {}
    for turn in range(1, 201):
        with CaptureQueriesContext(connection) as queries:
            run_turn(conversation=conversation, text=f"turn {turn}")
        if turn in (1, 2, 10, 100, 200):
            counts[turn] = len(queries)
    print(
        "SQL queries per turn (memory on, engine up): "
        + ", ".join(f"turn {t}: {n}" for t, n in counts.items())
    )

    http_overhead(h, engine, refused, hanging, args)
    engine.stop()
    hanging.stop()


def http_overhead(h: dict[str, Any], engine: Any, refused: str, hanging: Any, args: Any) -> None:
    """The same comparison through the WSGI app over a loopback socket."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    import requests
    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    session = requests.Session()
    session.get(f"{base}/accounts/login/")
    session.post(
        f"{base}/accounts/login/",
        data={
            "username": "bench",
            "password": "bench-password-123",
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
    )
    headers = {"X-CSRFToken": session.cookies["csrftoken"]}
    arms = {
        "memory off": {"ENABLED": False, "URL": engine.url},
        "memory on, engine up": {"ENABLED": True, "URL": engine.url},
        "engine refusing": {"ENABLED": True, "URL": refused},
        "engine hanging, breaker open": {"ENABLED": True, "URL": hanging.url},
    }
    results: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(args.rounds):
        for name, values in arms.items():
            configure_memory(**values)
            if name == "engine hanging, breaker open":
                from webui.turns import run_turn

                for _ in range(3):  # open the breaker (shared by the server thread)
                    run_turn(conversation=make_conversation(h), text="hello")
            created = session.post(
                f"{base}/api/conversations/",
                json={"soul": "pippa", "vessel": "offline"},
                headers=headers,
            ).json()
            url = f"{base}/api/conversations/{created['id']}/messages/"
            session.post(url, json={"text": "hello"}, headers=headers)
            samples = []
            for index in range(args.turns):
                started = time.perf_counter()
                response = session.post(url, json={"text": f"turn {index}"}, headers=headers)
                samples.append(time.perf_counter() - started)
                assert response.status_code == 201, response.text
            results[name].append(median(samples))
    server.shutdown()
    off = median(results["memory off"])
    print(f"Over HTTP (WSGI on loopback), median of {args.rounds} rounds x {args.turns} turns")
    for name, values in results.items():
        print(
            f"  {name:32s} {median(values) * 1000:8.2f} ms   ratio to off {median(values) / off:5.2f}"
        )


if __name__ == "__main__":
    main()
