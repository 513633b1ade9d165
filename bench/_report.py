"""One way for every benchmark to report a figure, so `docs/BENCHMARKS.md` is written from the
scripts' own output and cannot drift from the code.

A script calls :func:`figure` for each result it measured. The figure is printed for a person to
read and, on a line of its own starting with :data:`MARKER`, as JSON for the document writer to
collect. A figure with a target says whether it met it; one without is reported as measured.
:func:`none_wanted` is the target of a figure that counts what should never happen.
"""

import json
from typing import Any, Literal

MARKER = "BENCH-FIGURE "

Verdict = Literal["met", "missed", "reported"]


def figure(
    name: str,
    measured: str,
    *,
    target: str = "",
    met: bool | None = None,
    what: str = "",
    section: str = "",
) -> None:
    """Report one figure: ``measured`` as a person should read it, ``target`` as the issue states
    it, ``met`` whether it was reached (None: no target, reported only), ``what`` in words what
    was measured (arms, rounds, backend), ``section`` the heading it belongs under."""
    verdict: Verdict = "reported" if met is None else ("met" if met else "missed")
    shown = f"{name}: {measured}"
    if target:
        shown += f" (target {target}: {verdict.upper()})"
    print(shown, flush=True)
    row = {
        "name": name,
        "measured": measured,
        "target": target,
        "verdict": verdict,
        "what": what,
        "section": section,
    }
    print(MARKER + json.dumps(row, ensure_ascii=False), flush=True)


def none_wanted(count: int, unit: str = "") -> dict[str, Any]:
    """The ``target`` and ``met`` of a figure that counts what should never happen (errors,
    stale or repeated lines): none (of ``unit``), met when ``count`` is 0."""
    return {"target": f"0 {unit}".strip(), "met": count == 0}
