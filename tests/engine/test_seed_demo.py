"""``--seed-demo`` seeds only a soul that keeps no memories yet, so a restart adds nothing twice;
``manage.py memory_engine --seed-demo`` names the demo member ``load_demo`` made."""

from pathlib import Path

import pytest

from reference_engine.config import EngineConfig
from reference_engine.demo import seed_demo
from reference_engine.service import open_state
from webui.management.commands.memory_engine import demo_member, engine_command


def test_seeding_twice_leaves_one_set_of_demo_memories(tmp_path: Path) -> None:
    state = open_state(EngineConfig(database=f"{tmp_path}/engine.sqlite3"))
    said: list[str] = []

    seed_demo(state, member="", say=said.append)
    seed_demo(state, member="", say=said.append)  # as at the next start of make run

    texts = [m.text for m in state.souls["pippa"].memories]
    assert len(texts) == 2
    assert "blue tin" in texts[0]
    assert "no private demo memory was added" in said[0]
    assert "keeps memories already, so none were added" in said[1]
    state.database.close()


@pytest.mark.django_db
def test_the_alias_names_the_demo_member_load_demo_made(make_user: object) -> None:
    assert demo_member() == ""
    demo = make_user("demo")  # type: ignore[operator]

    command = engine_command({"seed_demo": True, "demo_member": demo_member(), "port": 9})

    assert command[1:4] == ["-m", "reference_engine", "serve"]
    assert command[command.index("--demo-member") + 1] == f"{demo.pk}:Demo"
    assert command[-1] == "--seed-demo"
    assert command[command.index("--port") + 1] == "9"
