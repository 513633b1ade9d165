"""What the memory layer costs a chat turn on the offline vessel, in process, and what a failing
engine costs it.

- **Fixed cost**: memory on (engine up) against memory off, per turn after the first, one
  fresh conversation per arm and round, their turns taken in alternation (so each pair sees the
  same machine); the median per round, and the median of the rounds' ratios.
- **Engine down**, on the turns that call the engine: a conversation with a question out (every
  turn fetches its answers) and a ``recall …`` turn (the memory tool calls the engine). The
  engine refuses (a closed port) or hangs (the reference engine's ``hang`` fault: it accepts and
  never answers), once with the breaker closed at the start of each measured turn and once with
  it opened by that engine's own failures. Each arm counts the requests the failing engine got
  (the hanging engine's request log; for the closed port, the client's logged failures) and the
  bench stops if an arm did not call the engine as its name says. With the breaker closed, the
  turn's wait on the engine (the turn less the same turn making no engine request) is held to
  the connect timeout for the refusing engine and to the call's budget for the hanging one; with
  it open, the turn (which makes no request) is held to a turn making no request, taken in
  alternation: memory off for the question out, and for the recall the same recall with no
  engine URL (the memory tool answers that memory is unavailable; memory off has no tool).
- **First turn with the engine hanging**: the pin waits once, bounded by the chat budget.

    .venv/bin/python bench/turn_overhead.py [--database sqlite|postgres] [--rounds 9] [--turns 30]
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _processes import closed_port_url
from _report import figure
from _setup import (
    arguments,
    backend_name,
    configure_memory,
    household,
    median,
    setup_django,
)

FIXED = "Fixed cost of the memory layer"
DOWN = "Engine down"
ASK_TEXT = "ask what did we plant in the garden this spring?"
RECALL_TEXT = "recall where the tea is kept"


def new_conversation(h: dict[str, Any]) -> Any:
    from webui.models import Conversation

    return Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=h["user"])


def timed(conversation: Any, texts: list[str], before: Callable[[], None] | None = None) -> float:
    """Median seconds of one turn per text, on ``conversation``; ``before`` runs untimed first."""
    from webui.turns.service import run_turn

    samples = []
    for text in texts:
        if before:
            before()
        started = time.perf_counter()
        run_turn(conversation=conversation, text=text)
        samples.append(time.perf_counter() - started)
    return median(samples)


def fixed_cost(h: dict[str, Any], engine: Any, args: Any) -> None:
    from webui.turns.service import run_turn

    arms = {
        "off": {"ENABLED": False, "URL": engine.url},
        "on": {"ENABLED": True, "URL": engine.url},
    }
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    texts = [f"turn {n}: how is the garden?" for n in range(args.turns)]
    for _ in range(args.rounds):
        conversations = {}
        for name, values in arms.items():
            configure_memory(**values)
            conversations[name] = new_conversation(h)
            run_turn(conversation=conversations[name], text="hello")  # the first turn pins
        on, off = alternated(conversations["on"], Paired(conversations["off"]), texts, engine.url)
        seconds["on"].append(on)
        seconds["off"].append(off)
    ratios = [on / off for on, off in zip(seconds["on"], seconds["off"], strict=True)]
    ratio, backend = median(ratios), backend_name(args.database)
    on, off = median(seconds["on"]) * 1000, median(seconds["off"]) * 1000
    figure(
        f"turn, memory on vs off, in process, {backend}",
        f"{ratio:.2f} ({on:.2f} ms vs {off:.2f} ms, {on - off:+.2f} ms a turn)",
        target="at most 1.10 (goal 1.05)",
        met=ratio <= 1.10,
        what=(
            f"run_turn on the offline vessel, engine up; median turn after the first over "
            f"{args.turns} turns of each arm taken in alternation, in each of {args.rounds} "
            f"rounds; median of the rounds' ratios"
        ),
        section=FIXED,
    )


class FailureCount(logging.Handler):
    """The engine calls the client made and saw fail, as ``"METHOD /path"`` (it logs each one it
    counted against the breaker; a call the open breaker stopped is not made, and not logged)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.calls: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # "Memory engine GET /v1/... failed (...)": records arrive formatted (and masked).
        words = record.getMessage().split(" ")
        if words[:2] == ["Memory", "engine"] and len(words) > 3:
            self.calls.append(f"{words[2]} {words[3]}")

    def install(self) -> "FailureCount":
        client = logging.getLogger("pippa_memory.engine.client")
        client.addHandler(self)
        client.setLevel(logging.WARNING)
        client.propagate = False  # counted here, not printed
        return self


class FailingEngine:
    """A failing engine and how many of the requests sent to ``path`` it has seen."""

    def __init__(self, kind: str, url: str, hanging: Any, failures: FailureCount) -> None:
        self.kind, self.url, self.hanging, self.failures = kind, url, hanging, failures

    def requests(self, path: str) -> int:
        if self.kind == "hanging":
            return sum(1 for r in self.hanging.received if r["path"].startswith(path))
        # Nothing listens on a closed port, so the client's logged failures are the count.
        return sum(1 for call in self.failures.calls if call.split(" ", 1)[-1].startswith(path))


def breaker_state() -> str:
    from pippa_memory.engine.client import BREAKER

    return BREAKER.get().current_state


def close_breaker() -> None:
    from pippa_memory.engine.client import BREAKER

    BREAKER.get().close()


def prepared(h: dict[str, Any], engine: Any, scenario: str) -> Any:
    """A conversation pinned with the engine up; for ``questions out``, with a question asked
    (the engine never answers it, so every later turn fetches answers)."""
    from webui.turns.service import run_turn

    configure_memory(ENABLED=True, URL=engine.url)
    conversation = new_conversation(h)
    run_turn(conversation=conversation, text="hello")
    if scenario == "questions out":
        run_turn(conversation=conversation, text=ASK_TEXT)
    return conversation


def switch_memory(*, enabled: bool, url: str) -> None:
    """Memory on or off with the engine at ``url``, the breaker left as it is (unlike
    ``configure_memory``, which closes it)."""
    from django.conf import settings

    settings.PIPPA_MEMORY = {**settings.PIPPA_MEMORY, "ENABLED": enabled, "URL": url}


@dataclass
class Paired:
    """A conversation whose turns make no engine request, taken in alternation with an arm's:
    memory off, or (``unconfigured``) memory on with no engine URL, so the memory tool answers
    that memory is unavailable without asking anything."""

    conversation: Any
    unconfigured: bool = False

    def switch(self, url: str) -> None:
        """Its memory settings, ``url`` being the arm's engine (unused with memory off)."""
        switch_memory(enabled=self.unconfigured, url="" if self.unconfigured else url)


def alternated(
    conversation: Any, paired: Paired, texts: list[str], url: str
) -> tuple[float, float]:
    """Median turn of ``conversation`` (memory on, the engine at ``url``, the breaker as it is)
    and of ``paired``, taken in alternation turn by turn, so each pair sees the same machine.
    ``paired`` makes no engine call, so the breaker stays as it was."""
    from webui.turns.service import run_turn

    samples: dict[bool, list[float]] = {True: [], False: []}
    for text in texts:
        for is_arm, measured in ((False, paired.conversation), (True, conversation)):
            if is_arm:
                switch_memory(enabled=True, url=url)
            else:
                paired.switch(url)
            started = time.perf_counter()
            run_turn(conversation=measured, text=text)
            samples[is_arm].append(time.perf_counter() - started)
    return median(samples[True]), median(samples[False])


def down_arm(
    conversation: Any,
    failing: FailingEngine,
    breaker: str,
    texts: list[str],
    path: str,
    paired: Paired | None = None,
) -> tuple[float, int, int, float | None]:
    """Median turn with ``failing`` as the engine and the breaker ``closed`` (closed again before
    each turn) or ``open`` (opened first by this engine's failures); the seconds, the requests
    the engine got while opening, and during the measured turns, and, where ``paired`` (a
    conversation making no engine request) is given and the breaker is open, the median of its turns taken in
    alternation with the measured ones (:func:`alternated`). ``paired`` takes as many turns as
    opening the breaker took, so both have as many turns behind them when measured."""
    from webui.turns.service import run_turn

    if failing.kind == "hanging":
        # The earlier arms' requests still hang, each holding one of the engine's request
        # threads (a fixed number, as in production): free them, so this arm's reach it.
        failing.hanging.reset()
        failing.hanging.set_fault("hang", seconds=600)
    configure_memory(ENABLED=True, URL=failing.url)
    before = failing.requests(path)
    opening = 0
    if breaker == "open":
        for opening_turns in range(1, 11):  # noqa: B007 - read after the loop
            run_turn(conversation=conversation, text=texts[0])
            if breaker_state() == "open":
                break
        opening = failing.requests(path) - before
        if breaker_state() != "open" or opening == 0:
            raise RuntimeError(f"{failing.kind}: the engine's failures did not open the breaker")
        if paired is not None:
            paired.switch(failing.url)  # no call: the breaker stays open
            for _ in range(opening_turns):
                run_turn(conversation=paired.conversation, text=texts[0])
            switch_memory(enabled=True, url=failing.url)
        before = failing.requests(path)
    held = None
    if breaker == "open" and paired is not None:
        seconds, held = alternated(conversation, paired, texts, failing.url)
    else:
        seconds = timed(conversation, texts, close_breaker if breaker == "closed" else None)
    during = failing.requests(path) - before
    if breaker == "closed" and during != len(texts):
        raise RuntimeError(f"{failing.kind}, closed: {during} of {len(texts)} turns called it")
    if breaker == "open" and during:
        raise RuntimeError(f"{failing.kind}, open: {during} calls got through the breaker")
    return seconds, opening, during, held


def scenario_arms(scenario: str) -> list[tuple[str, str]]:
    return [(kind, breaker) for kind in ("refusing", "hanging") for breaker in ("closed", "open")]


def engine_down(
    h: dict[str, Any], engine: Any, failing: dict[str, FailingEngine], args: Any
) -> None:
    """Both scenarios, every arm interleaved per round, against their baseline."""
    budgets = {"questions out": "CHAT_BUDGET", "recall": "TOOL_BUDGET"}
    results: dict[tuple[str, str, str], list[tuple[float, int, int, float | None]]] = {}
    baselines: dict[str, list[float]] = {scenario: [] for scenario in budgets}
    for _ in range(args.down_rounds):
        for scenario in budgets:
            texts, path = scenario_texts(scenario, args.down_turns)
            baselines[scenario].append(baseline(h, engine, scenario, texts))
            for kind, breaker in scenario_arms(scenario):
                conversation = prepared(h, engine, scenario)
                count = args.hang_turns if (kind, breaker) == ("hanging", "closed") else None
                paired = paired_with(h, engine, scenario) if breaker == "open" else None
                outcome = down_arm(
                    conversation, failing[kind], breaker, texts[: count or len(texts)], path, paired
                )
                results.setdefault((scenario, kind, breaker), []).append(outcome)
    backend = backend_name(args.database)
    for (scenario, kind, breaker), outcomes in results.items():
        bound = wait_bound(kind, budgets[scenario])
        quiet = no_request_turn(scenario, kind, results, baselines)
        report_down_arm(
            scenario, kind, breaker, outcomes, baselines[scenario], bound, backend, quiet
        )


def wait_bound(kind: str, budget: str) -> tuple[str, float]:
    """What a closed-breaker arm's wait on the engine is held to, read from the settings: for a
    refusing engine (nothing listens, so the connection is refused at once) the connect timeout,
    the longest the design lets a connection attempt take; for a hanging one the call's budget
    (``CHAT_BUDGET`` or ``TOOL_BUDGET``)."""
    from pippa_memory.conf import memory_settings

    name = "CONNECT_TIMEOUT" if kind == "refusing" else budget
    words = "the connect timeout" if kind == "refusing" else "the budget"
    return f"{words} ({name}, {getattr(memory_settings, name):g} s)", getattr(memory_settings, name)


def paired_with(h: dict[str, Any], engine: Any, scenario: str) -> Paired:
    """What a breaker-open arm is held against, with the same turns behind it: for ``questions
    out``, memory off (the turn fetches nothing); for ``recall``, the same recall with memory on
    and no engine URL, pinned with the engine up as the arm's conversation was (the memory tool
    answers that memory is unavailable with no request, as it does with the breaker open; memory
    off has no tool, so its turn skips the tool round the arm's turn takes)."""
    if scenario == "recall":
        return Paired(prepared(h, engine, scenario), unconfigured=True)
    return Paired(memory_off_conversation(h, engine, first_turns(scenario)))


def first_turns(scenario: str) -> list[str]:
    """The turns a scenario's conversation has behind it before its measured ones
    (:func:`prepared`)."""
    return ["hello", ASK_TEXT] if scenario == "questions out" else ["hello"]


def no_request_turn(
    scenario: str,
    kind: str,
    results: dict[tuple[str, str, str], list[tuple[float, int, int, float | None]]],
    baselines: dict[str, list[float]],
) -> float:
    """The median seconds of the same turn making no engine request, which a closed-breaker arm's
    wait on the engine is measured from: memory off for ``questions out`` (the memory-off turn
    fetches nothing) and, for ``recall``, the arm of the same failing engine with its breaker open
    (the tool answers at once, with no request)."""
    if scenario == "questions out":
        return median(baselines[scenario])
    return median([outcome[0] for outcome in results[(scenario, kind, "open")]])


def scenario_texts(scenario: str, turns: int) -> tuple[list[str], str]:
    """The measured turns' texts and the engine path they call."""
    if scenario == "questions out":
        return [f"turn {n}: how is the garden?" for n in range(turns)], "/v1/conversations/"
    return [RECALL_TEXT] * turns, "/v1/recall"


def baseline(h: dict[str, Any], engine: Any, scenario: str, texts: list[str]) -> float:
    """The same turns with memory off, which make no engine request: for ``questions out`` no
    fetch at all; for ``recall`` the same text, which with no memory tool the vessel answers in
    one round."""
    return timed(memory_off_conversation(h, engine, first_turns(scenario)), texts)


def memory_off_conversation(h: dict[str, Any], engine: Any, texts: list[str] | None = None) -> Any:
    """A new conversation past the turns of ``texts`` (its first turn, ``hello``, by default),
    memory off (memory is left off): for ``questions out``, the same turns as the conversation
    held against it (:func:`prepared`) had, so both replay as long a history."""
    from webui.turns.service import run_turn

    configure_memory(ENABLED=False, URL=engine.url)
    conversation = new_conversation(h)
    for text in texts or ["hello"]:
        run_turn(conversation=conversation, text=text)
    return conversation


def report_down_arm(
    scenario: str,
    kind: str,
    breaker: str,
    outcomes: list[tuple[float, int, int, float | None]],
    baseline_seconds: list[float],
    bound: tuple[str, float],
    backend: str,
    no_request: float,
) -> None:
    seconds = median([o[0] for o in outcomes])
    against = median(baseline_seconds)
    calls, opening = sum(o[2] for o in outcomes), sum(o[1] for o in outcomes)
    held = (
        "memory off"
        if scenario == "questions out"
        else "the same recall with no engine URL (the tool answers memory unavailable)"
    )
    fault = (
        "refusing (a closed port: connection refused)"
        if kind == "refusing"
        else "hanging (the reference engine's hang fault: it accepts and never answers)"
    )
    if breaker == "closed":
        waited = seconds - no_request
        quiet = "memory off" if scenario == "questions out" else "the breaker open"
        measured = (
            f"{waited * 1000:.1f} ms waiting on the engine ({seconds * 1000:.1f} ms a turn, "
            f"{no_request * 1000:.1f} ms with {quiet}; {seconds / against:.2f} of memory off); "
            f"{calls} engine requests made, one per measured turn"
        )
        target, met = f"a wait of at most {bound[0]}", waited <= bound[1]
        how = (
            "the breaker closed at the start of each measured turn, so every turn called the "
            f"engine; the wait is the turn less the same turn making no engine request ({quiet})"
        )
    else:
        # Held against the memory-off turns taken in alternation with its own.
        against = median([o[3] for o in outcomes])
        ratio = median([o[0] / o[3] for o in outcomes])
        off = (
            ""
            if scenario == "questions out"
            else f"; {seconds / median(baseline_seconds):.2f} of memory off, which has no tool"
        )
        measured = (
            f"{ratio:.2f} of {held} ({seconds * 1000:.2f} ms vs {against * 1000:.2f} ms{off}); "
            f"{opening} requests opened the breaker, 0 in the measured turns"
        )
        target, met = "at most 1.10", ratio <= 1.10
        how = (
            "the breaker opened by this engine's own failures first; measured turns make no "
            "request (the memory tool answers that memory is unavailable)"
            if scenario == "recall"
            else "the breaker opened by this engine's own failures first; measured turns make "
            "no request"
        )
        how += (
            ", each taken in alternation with a turn making no engine request, with as many "
            "turns behind it; median of the rounds' ratios"
        )
        quiet = held
    figure(
        f"{scenario}, engine {kind}, breaker {breaker}, {backend}",
        measured,
        target=target,
        met=met,
        what=(
            f"run_turn on the offline vessel with the engine {fault}; {how}; held against "
            f"{quiet}; median over {len(outcomes)} interleaved rounds"
        ),
        section=DOWN,
    )


def first_turn(h: dict[str, Any], failing: FailingEngine, args: Any) -> None:
    """The first turn (the pin) with the engine hanging and the breaker closed."""
    from pippa_memory.conf import memory_settings
    from webui.turns.service import run_turn

    samples = []
    for _ in range(args.down_rounds):
        # as in down_arm: free the threads the earlier requests hold
        failing.hanging.reset()
        failing.hanging.set_fault("hang", seconds=600)
        configure_memory(ENABLED=True, URL=failing.url)
        before = failing.requests("/v1/souls/")
        started = time.perf_counter()
        run_turn(conversation=new_conversation(h), text="hello")
        samples.append(time.perf_counter() - started)
        if failing.requests("/v1/souls/") != before + 1:
            raise RuntimeError("the first turn's pin did not call the hanging engine")
    budget = memory_settings.CHAT_BUDGET
    figure(
        f"first turn, engine hanging, breaker closed, {backend_name(args.database)}",
        f"{median(samples) * 1000:.0f} ms; each called the engine once",
        target=f"at most the chat budget ({budget:g} s)",
        met=median(samples) <= budget,
        what=(
            f"the first turn of a new conversation (it asks the engine for the head to pin) with "
            f"an engine that accepts and never answers; median of {len(samples)}"
        ),
        section=DOWN,
    )


def main() -> None:
    args = arguments(
        __doc__.splitlines()[0],
        rounds=(9, 2),
        turns=(30, 4),
        # The engine-down arms are held to a tenth of a 7 ms turn: enough turns that a
        # millisecond's noise does not decide them (the hanging arms take hang_turns).
        down_rounds=(5, 1),
        down_turns=(40, 2),
        hang_turns=(2, 1),
    )
    setup_django(database=args.database, label="turns")
    from reference_engine.server import ReferenceEngine

    h = household()
    # Up: asks are never answered, so a question stays out.
    engine = ReferenceEngine(token="bench-token", answer_delay=10**9).start()
    engine.state.remember("pippa", "The tea is in the blue tin.", scope="household")
    hanging = ReferenceEngine(token="bench-token").start()
    hanging.set_fault("hang", seconds=600)
    failures = FailureCount().install()
    failing = {
        "refusing": FailingEngine("refusing", closed_port_url(), None, failures),
        "hanging": FailingEngine("hanging", hanging.url, hanging, failures),
    }
    try:
        fixed_cost(h, engine, args)
        engine_down(h, engine, failing, args)
        first_turn(h, failing["hanging"], args)
    finally:  # a hung request's thread would otherwise keep the interpreter from exiting
        engine.stop()
        hanging.stop()


if __name__ == "__main__":
    main()
