"""How a turn's cost grows with the conversation: a turn at position 300 against a turn at
position 2, on the offline vessel, in process, memory on (the target) and off.

One long conversation per arm is built turn by turn to position ``--position`` - 1 (its SQL
queries counted at turns 1, 2, 10, 100 and the last). Then, interleaved: a fresh conversation's
second turn, and the long conversation's next turn; ``--samples`` of each, medians.

    .venv/bin/python bench/growth.py [--database sqlite|postgres] [--position 300] [--samples 9]
"""

import time
from typing import Any

from _report import figure
from _setup import arguments, backend_name, configure_memory, household, median, setup_django

SECTION = "Growth with the conversation"


def new_conversation(h: dict[str, Any]) -> Any:
    from webui.models import Conversation

    return Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=h["user"])


def timed_turn(conversation: Any, text: str) -> float:
    from webui.turns.service import run_turn

    started = time.perf_counter()
    run_turn(conversation=conversation, text=text)
    return time.perf_counter() - started


def long_conversation(h: dict[str, Any], turns: int) -> tuple[Any, dict[int, int]]:
    """A conversation of ``turns`` turns, and the SQL queries some of them made."""
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from webui.turns.service import run_turn

    conversation = new_conversation(h)
    counted = {1, 2, 10, 100, turns}
    queries = {}
    for turn in range(1, turns + 1):
        # Django keeps the last 9,000 queries: a full log would count a turn as none.
        reset_queries()
        with CaptureQueriesContext(connection) as captured:
            run_turn(conversation=conversation, text=f"turn {turn}: how is the garden?")
        if turn in counted:
            queries[turn] = len(captured)
    return conversation, queries


def main() -> None:
    args = arguments(__doc__.splitlines()[0], position=(300, 30), samples=(9, 2))
    setup_django(database=args.database, label="growth")
    from reference_engine.server import ReferenceEngine

    h = household()
    engine = ReferenceEngine(token="bench-token").start()
    arms = {"on": {"ENABLED": True, "URL": engine.url}, "off": {"ENABLED": False}}
    long: dict[str, Any] = {}
    queries: dict[str, dict[int, int]] = {}
    for name, values in arms.items():
        configure_memory(**values)
        long[name], queries[name] = long_conversation(h, args.position - 1)
    early: dict[str, list[float]] = {name: [] for name in arms}
    late: dict[str, list[float]] = {name: [] for name in arms}
    for index in range(args.samples):
        for name, values in arms.items():
            configure_memory(**values)
            fresh = new_conversation(h)
            timed_turn(fresh, "hello")
            early[name].append(timed_turn(fresh, "how is the garden?"))
            late[name].append(timed_turn(long[name], f"late turn {index}: how is the garden?"))
    engine.stop()
    report(args, early, late, queries["on"])


def report(
    args: Any, early: dict[str, list[float]], late: dict[str, list[float]], queries: dict[int, int]
) -> None:
    backend = backend_name(args.database)
    for name in ("on", "off"):
        ratio = median(late[name]) / median(early[name])
        figure(
            f"growth, turn at position {args.position} vs position 2, memory {name}, {backend}",
            f"{ratio:.2f} ({median(late[name]) * 1000:.2f} ms vs {median(early[name]) * 1000:.2f} ms)",
            target="at most 1.5" if name == "on" else "",
            met=ratio <= 1.5 if name == "on" else None,
            what=(
                f"run_turn on the offline vessel, memory {name}: the next turn of a conversation "
                f"of {args.position - 1} turns against the second turn of a new one, "
                f"{args.samples} of each interleaved, medians"
            ),
            section=SECTION,
        )
    later = [count for turn, count in queries.items() if turn > 1]
    figure(
        f"SQL queries per turn, memory on, {backend}",
        ", ".join(f"turn {turn}: {count}" for turn, count in sorted(queries.items())),
        target="the same at every turn after the first",
        met=len(set(later)) == 1,
        what="queries run by run_turn, counted while the long conversation was built",
        section=SECTION,
    )


if __name__ == "__main__":
    main()
