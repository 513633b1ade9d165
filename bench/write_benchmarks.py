"""Run every benchmark and write ``docs/BENCHMARKS.md`` from their own output (``make bench``).

Each script reports its figures through :func:`_report.figure`; this runs the scripts one after
another (SQLite and PostgreSQL where a script takes ``--database``), echoes what they print,
collects the figure lines and writes the document from ``bench/BENCHMARKS.template.md``: the date,
the commit, the machine, and per section a table of figure, target, measured, verdict and what
was measured. The template holds the prose; it must not state measured numbers (they would drift
from the code), and the writer refuses one that does. At the end every figure is printed next to
its target with met or missed, and the exit status says whether every script ran.

    .venv/bin/python bench/write_benchmarks.py [--quick] [--output docs/BENCHMARKS.md] [--only NAME]
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _report import MARKER
from _setup import POSTGRES_SERVER, ROOT

BENCH = Path(__file__).resolve().parent
TEMPLATE = BENCH / "BENCHMARKS.template.md"
#: The runs, in order: a script and its arguments.
RUNS: list[tuple[str, list[str]]] = [
    ("turn_overhead.py", ["--database", "sqlite"]),
    ("turn_overhead.py", ["--database", "postgres"]),
    ("growth.py", ["--database", "sqlite"]),
    ("growth.py", ["--database", "postgres"]),
    ("outbox.py", ["--database", "sqlite"]),
    ("outbox.py", ["--database", "postgres"]),
    ("throughput.py", ["--database", "sqlite"]),
    ("throughput.py", ["--database", "postgres"]),
    ("prompt_cache.py", []),
    ("brain_door.py", []),
    ("recall_quality.py", ["--database", "sqlite"]),
    ("recall_quality.py", ["--database", "postgres"]),
    ("engine.py", ["--database", "sqlite"]),
    ("engine.py", ["--database", "postgres"]),
    ("household_year.py", ["--database", "sqlite"]),
    ("household_year.py", ["--database", "postgres"]),
    ("household_truth.py", ["--database", "sqlite"]),
    ("household_truth.py", ["--database", "postgres"]),
    ("streaming.py", []),
]
FIGURES_MARK = re.compile(r"^<!-- figures: (?P<section>.+?) -->$", re.MULTILINE)
#: A measured number in prose: a quantity with a unit the benchmarks measure in.
STATED_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|%|turns/s|events/s|req/s|times)\b")


def run(script: str, options: list[str], env: dict[str, str]) -> tuple[list[dict[str, Any]], str]:
    """Run one script, echoing its output; its figures, and '' or why it failed."""
    command = [sys.executable, script, *options]
    print(f"\n$ {' '.join(['python', script, *options])}", flush=True)
    process = subprocess.Popen(
        command, cwd=BENCH, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    figures, tail = [], []
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(MARKER):
            figures.append({**json.loads(line[len(MARKER) :]), "script": script})
            continue
        print(line, end="", flush=True)
        tail = (tail + [line.rstrip()])[-5:]
    if process.wait() != 0:
        return figures, f"exited with status {process.returncode}: " + " / ".join(tail)
    return figures, ""


def postgres_version() -> str:
    try:
        import psycopg

        with psycopg.connect(f"{POSTGRES_SERVER}/postgres", connect_timeout=5) as connection:
            return connection.execute("SHOW server_version").fetchone()[0]
    except Exception as failure:  # noqa: BLE001 - the document says it could not be read
        return f"unknown ({type(failure).__name__})"


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    import sqlite3

    import django

    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    kib = int(Path("/proc/meminfo").read_text().split()[1])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        # This page, which the run rewrites, is not a change to what was measured.
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/BENCHMARKS.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (with uncommitted changes)" if dirty else ""),
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "ram": f"{kib / 1024 / 1024:.1f} GiB",
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "django": django.get_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": postgres_version(),
        # Other work on the machine moves every absolute time: say how busy it was.
        "load": f"{os.getloadavg()[0]:.1f}",
    }


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "–"


def table(figures: list[dict[str, Any]]) -> str:
    rows = ["| figure | target | measured | verdict | what was measured |", "|---|---|---|---|---|"]
    for f in figures:
        verdict = {"met": "met", "missed": "**missed**", "reported": "reported"}[f["verdict"]]
        rows.append(
            f"| {cell(f['name'])} | {cell(f['target'])} | {cell(f['measured'])} | {verdict} "
            f"| {cell(f['what'])} |"
        )
    return "\n".join(rows)


def check_template(text: str) -> None:
    """Refuse prose that states a measured number (outside code)."""
    prose = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    found = STATED_NUMBER.findall(prose)
    if found:
        raise SystemExit(f"{TEMPLATE.name} states measured numbers {found}: put them in a figure")


def document(
    figures: list[dict[str, Any]], failures: list[str], quick: bool, facts: dict[str, str]
) -> str:
    """The page: the template's prose, the run's ``facts`` (see :func:`machine`) and figures."""
    template = TEMPLATE.read_text()
    check_template(template)
    header = (
        f"Written by `make bench` (`bench/write_benchmarks.py`) on {facts['date']} at commit "
        f"`{facts['commit']}`, on {facts['cores']} cores ({facts['cpu']}), {facts['ram']} of "
        f"RAM, {facts['system']}, Python {facts['python']}, Django {facts['django']}, SQLite "
        f"{facts['sqlite']}, PostgreSQL {facts['postgresql']}; the load average was "
        f"{facts['load']} when the run started and {os.getloadavg()[0]:.1f} when it ended. Do "
        "not edit this page by hand: the prose "
        "is in `bench/BENCHMARKS.template.md`, the figures come from the scripts."
    )
    if quick:
        header += (
            "\n\n**Quick mode** (`--quick`): every script ran with few rounds to check that it "
            "works; these figures are not measurements."
        )
    if failures:
        header += "\n\n**Scripts that failed** (their figures are missing):\n\n" + "\n".join(
            f"- {failure}" for failure in failures
        )
    met = sum(f["verdict"] == "met" for f in figures)
    missed = sum(f["verdict"] == "missed" for f in figures)
    header += f"\n\nAgainst their targets: {met} met, {missed} missed."
    placed = set(FIGURES_MARK.findall(template))

    def section_table(match: re.Match[str]) -> str:
        rows = [f for f in figures if f["section"] == match["section"]]
        return table(rows) if rows else "No figures were reported for this section."

    body = FIGURES_MARK.sub(section_table, template.replace("{{header}}", header))
    rest = [f for f in figures if f["section"] not in placed]
    if rest:
        body += "\n## Other figures\n\n" + table(rest) + "\n"
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: check, not measure")
    parser.add_argument("--output", type=Path, default=ROOT / "docs/BENCHMARKS.md")
    parser.add_argument("--only", action="append", help="run only this script (repeatable)")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if args.quick:
        env["BENCH_QUICK"] = "1"
    check_template(TEMPLATE.read_text())  # before the long run, not after it
    facts = machine()  # the date and commit the run started at
    figures: list[dict[str, Any]] = []
    failures = []
    for script, options in RUNS:
        if args.only and script not in args.only and script.removesuffix(".py") not in args.only:
            continue
        found, failure = run(script, options, env)
        figures += found
        if failure:
            failures.append(f"`{script} {' '.join(options)}`: {failure}".replace("  ", " "))
    args.output.write_text(document(figures, failures, args.quick, facts))
    print(f"\nEvery figure against its target (written to {args.output}):")
    for f in figures:
        against = f" (target {f['target']}: {f['verdict'].upper()})" if f["target"] else ""
        print(f"  {f['name']}: {f['measured']}{against}")
    for failure in failures:
        print(f"  FAILED {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
