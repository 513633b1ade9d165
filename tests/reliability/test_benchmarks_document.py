"""``make bench`` writes ``docs/BENCHMARKS.md`` from the scripts' own output: every script runs
(quick mode here: few rounds, a check that each works end to end, not a measurement) and every
figure lands in the document with its target and verdict, beside the machine it ran on."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
DATABASES = ("SQLite", "PostgreSQL")
SITES = ("memory on", "memory off", "memory on, no CONN_MAX_AGE")


def members(level: int) -> str:
    return f"{level} member{'s' if level > 1 else ''}"


def expected_figures() -> list[str]:
    names = []
    for db in DATABASES:
        names.append(f"turn, memory on vs off, in process, {db}")
        for scenario in ("questions out", "recall"):
            for kind in ("refusing", "hanging"):
                for breaker in ("closed", "open"):
                    names.append(f"{scenario}, engine {kind}, breaker {breaker}, {db}")
        names.append(f"first turn, engine hanging, breaker closed, {db}")
        for memory in ("on", "off"):
            names.append(f"growth, turn at position 30 vs position 2, memory {memory}, {db}")
        names.append(f"SQL queries per turn, memory on, {db}")
        names.append(f"outbox delivery vs raw requests loop, {db}")
        names.append(f"outbox events recorded by the engine once each, {db}")
        for level in (1, 4, 16):
            names += [f"throughput, {members(level)}, {site}, {db}" for site in SITES]
            names.append(f"throughput, memory on vs off, {members(level)}, {db}")
            names.append(f"throughput, persistent connections vs none, {members(level)}, {db}")
        names.append(f"Largest block in a household's year ({db})")
        names.append(f"Share of the last 30 days' memories in the day's block ({db})")
        names.append(f"Repeated lines in any block ({db})")
        for arm in ("Head", "Head after a remember", "Past block"):
            names.append(f"{arm} p50 / p95 at 1,000 memories ({db})")
    names += [f"brain door, {n} client{'s' if n > 1 else ''}, SQLite" for n in (1, 8, 32)]
    names += ["streaming, offline", "streaming, provider double (20 x 0.05s)"]
    return names


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    output = tmp_path_factory.mktemp("bench") / "BENCHMARKS.md"
    finished = subprocess.run(
        [sys.executable, "write_benchmarks.py", "--quick", "--output", str(output)],
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert finished.returncode == 0, finished.stdout[-4000:] + finished.stderr[-2000:]
    return output.read_text(), finished.stdout


def table_rows(document: str) -> dict[str, list[str]]:
    rows = {}
    for line in document.splitlines():
        if line.startswith("| ") and not line.startswith(("| figure", "|---")):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0]] = cells
    return rows


# Every script in turn, servers included: one worker, one at a time with the production-server
# tests, since beside the load test on PostgreSQL its servers would share the hundred connections.
@pytest.mark.xdist_group("production_server")
def test_every_benchmark_figure_is_in_the_document_with_its_target_and_verdict(
    quick_run: tuple[str, str],
) -> None:
    document, _ = quick_run
    rows = table_rows(document)

    missing = [name for name in expected_figures() if name not in rows]
    assert not missing, f"figures missing from the document: {missing}"
    for name in expected_figures():
        _, target, measured, verdict, what = rows[name]
        assert verdict in {"met", "**missed**", "reported"}, (name, verdict)
        assert measured != "–", f"{name} has no measured value"
        assert what != "–", f"{name} does not say what was measured"
        assert (target == "–") == (verdict == "reported"), (name, target, verdict)
    assert rows["turn, memory on vs off, in process, SQLite"][1] == "at most 1.10 (goal 1.05)"
    assert rows["outbox delivery vs raw requests loop, PostgreSQL"][1] == "at least 0.80"


@pytest.mark.xdist_group("production_server")
def test_the_document_names_the_date_commit_and_machine_and_says_it_was_a_quick_run(
    quick_run: tuple[str, str],
) -> None:
    document, _ = quick_run
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()

    assert f"at commit `{commit}" in document
    assert re.search(r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC", document)
    for fact in ("cores (", "GiB of RAM", "Python 3.", "SQLite 3.", "PostgreSQL 1"):
        assert fact in document, fact
    assert "**Quick mode**" in document
    assert "Scripts that failed" not in document


@pytest.mark.xdist_group("production_server")
def test_make_bench_prints_every_ratio_next_to_its_target_with_met_or_missed(
    quick_run: tuple[str, str],
) -> None:
    _, printed = quick_run
    summary = printed.split("Every figure against its target", 1)[1]

    for name in (
        "turn, memory on vs off, in process, SQLite",
        "turn, memory on vs off, in process, PostgreSQL",
        "outbox delivery vs raw requests loop, SQLite",
        "outbox delivery vs raw requests loop, PostgreSQL",
        "growth, turn at position 30 vs position 2, memory on, PostgreSQL",
    ):
        line = next(line for line in summary.splitlines() if line.strip().startswith(name))
        assert re.search(r"\(target .+: (MET|MISSED)\)$", line), line


def test_the_writer_refuses_prose_that_states_a_measured_number() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import write_benchmarks
    finally:
        sys.path.remove(str(BENCH))

    write_benchmarks.check_template("Memory adds `3 ms` in code, and costs little.")
    with pytest.raises(SystemExit, match="states measured numbers"):
        write_benchmarks.check_template("The memory layer adds 1.2 ms a turn.")
    write_benchmarks.check_template(write_benchmarks.TEMPLATE.read_text())
