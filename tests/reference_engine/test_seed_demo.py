"""``--seed-demo`` seeds only a soul that keeps no memories yet, so a restart adds nothing twice;
``manage.py memory_engine --seed-demo`` names the demo member ``load_demo`` made."""

import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from pippa_memory.management.commands.memory_engine import demo_member, engine_command
from reference_engine.config import EngineConfig
from reference_engine.demo import demo_member_of, seed_demo
from reference_engine.service import open_state


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


@pytest.mark.django_db
def test_load_demo_names_its_member_for_make_runs_engine(tmp_path: Path) -> None:
    """``make run`` hands this file's ``id:name`` to the engine as PIPPA_ENGINE_DEMO_MEMBER."""
    member_file = tmp_path / ".demo-member"

    call_command("load_demo", "--member-file", str(member_file), stdout=io.StringIO())

    demo = get_user_model().objects.get(username="demo")
    assert member_file.read_text() == f"{demo.pk}:Demo Member\n"
    assert demo_member_of(member_file.read_text()) == (str(demo.pk), "Demo Member")
