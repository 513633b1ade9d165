"""``manage.py memory_import`` brings a replaced memory in with the memory that replaced it, in
one batch, however many batches the file takes: so when the engine keeps the replacement's words
already (under another id, as one memory per fact does), the replaced memory follows the one it
keeps, and nothing fails half-way with the current memories in and their history out."""

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from pippa_memory.portability import soul_moves
from reference_engine.server import ReferenceEngine
from tests.support.engine_token import TOKEN
from tests.support.household_memory import add_memory

pytestmark = pytest.mark.django_db

OLD_GP, NEW_GP = "Dr Lund is our GP.", "Our GP is Dr Berg."


@pytest.fixture
def exported(memory_on: ReferenceEngine, soul: Any, user: Any, tmp_path: Path) -> Path:
    """A soul export of five current memories and one replaced (Dr Lund, by Dr Berg), the
    replacement first in the file so that, in file order, its history comes batches later."""
    lund = add_memory(memory_on, OLD_GP, by=user)
    memory_on.state.correct_item("pippa", lund, NEW_GP, viewer=str(user.pk), name="alice")
    for n in range(4):
        add_memory(memory_on, f"Household note {n}.", by=user)
    path = tmp_path / "full.jsonl"
    call_command("memory_export", "pippa", str(path))
    return path


@pytest.fixture
def fresh(configure: Any) -> Any:
    running = ReferenceEngine(token=TOKEN, answer_delay=0.0).start()
    configure(URL=running.url)
    yield running
    running.stop()


def test_a_replaced_memory_follows_the_memory_the_engine_keeps_for_its_replacement(
    exported: Path, fresh: ReferenceEngine, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The new site's engine was told the same fact already, by the same member, in other case.
    fresh.state.remember("pippa", "our GP is Dr Berg", member=str(user.pk), name="alice")
    monkeypatch.setattr(soul_moves, "BATCH_ITEMS", 2)

    call_command("memory_import", "pippa", str(exported))

    current = {m.text for m in fresh.state.souls["pippa"].memories}
    # One memory per fact: the words it kept stand for Dr Berg's; Dr Lund is not current.
    assert current == {"our GP is Dr Berg", *(f"Household note {n}." for n in range(4))}
    with fresh.database.read() as cursor:
        replaced_by = cursor.run(
            "SELECT n.text FROM engine_items o JOIN engine_items n ON n.seq = o.superseded_by "
            "WHERE o.text = ? AND o.superseded_rev IS NOT NULL",
            [OLD_GP],
        ).all()
    # Dr Lund came back as history, replaced by the memory kept for Dr Berg: never current.
    assert [row[0] for row in replaced_by] == ["our GP is Dr Berg"]


def test_batches_never_part_a_replaced_memory_from_its_replacement(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(soul_moves, "BATCH_ITEMS", 2)

    batches = [[m["text"] for m in batch] for batch in soul_moves.batches(exported)]

    assert sum(len(batch) for batch in batches) == 6
    together = [batch for batch in batches if NEW_GP in batch]
    assert together
    assert OLD_GP in together[0]
    assert together[0].index(NEW_GP) < together[0].index(OLD_GP)
