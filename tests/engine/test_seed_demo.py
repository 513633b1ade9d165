"""``--seed-demo`` seeds only a soul that keeps no memories yet, so a restart adds nothing twice."""

import io

import pytest

from reference_engine.service import open_state
from webui.management.commands.memory_engine import Command


@pytest.mark.django_db
def test_seeding_twice_leaves_one_set_of_demo_memories(tmp_path: str) -> None:
    state = open_state(f"{tmp_path}/engine.sqlite3")
    out = io.StringIO()

    Command(stdout=out).seed_state(state)
    Command(stdout=out).seed_state(state)  # as at the next start of make run

    texts = [m.text for m in state.souls["pippa"].memories]
    assert len(texts) == 2
    assert "blue tin" in texts[0]
    assert "keeps memories already, so none were added" in out.getvalue()
    state.database.close()
