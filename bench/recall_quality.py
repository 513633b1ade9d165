"""Recall quality: recall@1, recall@5 and MRR of words only, meaning only and fused, side by side,
on the committed set ``bench/data/recall_quality.json`` (200 household memories and 100 questions
written for the project, each naming the memory it is about, most in other words than it).

Each arm runs against the reference engine's own recall on a real database (SQLite, or a
PostgreSQL database made for the run and dropped after), so it measures what a member gets.

    .venv/bin/python bench/recall_quality.py [--database sqlite|postgres]
"""

import json
from pathlib import Path

from _report import figure
from _setup import arguments, backend_name
from engine import engine_database

from reference_engine.recall import fused
from reference_engine.state import EngineState
from reference_engine.storage.database import Database
from reference_engine.storage.ranking import ranked_matches

DATA = Path(__file__).with_name("data") / "recall_quality.json"
DEPTH = 20


SECTION = "Recall quality"


def main() -> int:
    args = arguments(__doc__ or "")  # the set is small: --quick measures it whole too
    data = json.loads(DATA.read_text(encoding="utf-8"))
    state = EngineState(Database(engine_database(args.database)))
    seq_of: dict[str, int] = {}
    for memory in data["memories"]:
        state.remember("pippa", memory["text"])
        seq_of[memory["id"]] = max(m.seq for m in state.souls["pippa"].memories)
    ranks: dict[str, list[int | None]] = {"words": [], "meaning": [], "fused": []}
    with state.database.read() as cursor:
        for question in data["questions"]:
            text, wanted = question["question"], seq_of[question["memory"]]
            words = ranked_matches(cursor, "pippa", text, viewer=None, limit=DEPTH)
            near = [m for m, _ in state.meaning.nearest(cursor, "pippa", text, viewer=None,
                                                        limit=DEPTH)]  # fmt: skip
            for arm, found in (("words", words), ("meaning", near),
                               ("fused", fused(words, near, DEPTH, text))):  # fmt: skip
                seqs = [m.seq for m in found]
                ranks[arm].append(seqs.index(wanted) + 1 if wanted in seqs else None)
    state.database.close()
    backend = backend_name(args.database)
    section = SECTION
    what = (
        f"{len(data['memories'])} household memories and {len(data['questions'])} questions "
        f"(bench/data/recall_quality.json), the engine's own rankings, {backend}"
    )
    scores = {}
    for arm, found in ranks.items():
        n = len(found)
        at1 = sum(r == 1 for r in found) / n
        at5 = sum(r is not None and r <= 5 for r in found) / n
        mrr = sum(1 / r for r in found if r) / n
        scores[arm] = at5
        figure(f"{arm}: recall@1 ({backend})", f"{at1:.2f}", what=what, section=section)
        figure(f"{arm}: MRR ({backend})", f"{mrr:.3f}", what=what, section=section)
        if arm != "fused":
            figure(f"{arm}: recall@5 ({backend})", f"{at5:.2f}", what=what, section=section)
    figure(
        f"fused: recall@5 ({backend})",
        f"{scores['fused']:.2f} (words only {scores['words']:.2f})",
        target=">= 0.85 and >= 0.20 above words only",
        met=scores["fused"] >= 0.85 and scores["fused"] - scores["words"] >= 0.2,
        what=what,
        section=section,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
