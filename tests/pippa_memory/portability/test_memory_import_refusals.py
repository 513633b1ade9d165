"""``manage.py memory_import`` refuses bad input whole, naming the line or item, with nothing
imported: a future schema version, a file cut short, a file for another soul, an id named twice
with two texts, an unknown member's private memories, an id the engine keeps with another text.
An import cut off half-way is finished by running it again, with nothing doubled."""

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from pippa_memory.portability import soul_moves
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import add_memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported(memory_on: ReferenceEngine, soul: Any, user: Any, tmp_path: Path) -> list[str]:
    """The lines of a soul export of 5 memories (one Alice's private), read back; the engine is
    then emptied of them, by a fresh engine's turn."""
    add_memory(memory_on, "Alice hides the biscuits.", scope="private", by=user)
    for n in range(4):
        add_memory(memory_on, f"Household note {n}.", by=user)
    path = tmp_path / "full.jsonl"
    call_command("memory_export", "pippa", str(path))
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.fixture
def fresh(configure: Any) -> Any:
    running = ReferenceEngine(token="engine-test-token", answer_delay=0.0).start()
    configure(URL=running.url)
    yield running
    running.stop()


def written(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def refused(path: Path) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("memory_import", "pippa", str(path))
    return str(caught.value)


def with_header(lines: list[str], **fields: Any) -> list[str]:
    return [json.dumps({**json.loads(lines[0]), **fields}) + "\n", *lines[1:]]


def test_each_bad_file_is_refused_naming_the_line_and_nothing_is_imported(
    exported: list[str], fresh: ReferenceEngine, tmp_path: Path
) -> None:
    second = json.loads(exported[2])
    cases = {
        "newer site": with_header(exported, version=2),
        "cut short": exported[:-1],
        "Line 6 is not JSON": [*exported[:-1], exported[-1][:20]],
        "for soul 'other'": with_header(exported, soul="other"),
        "also on line 2": [*exported, json.dumps({**json.loads(exported[1]), "text": "x"}) + "\n"],
        "member's download": with_header(exported, kind="member"),
        f"Line 3: item {second['id']!r} was replaced by 'm-not-in-file'": [
            *exported[:2],
            json.dumps({**second, "superseded_by": {"id": "m-not-in-file", "at": "2026"}}) + "\n",
            *exported[3:],
        ],
    }
    cases["also on line 2"] = with_header(cases["also on line 2"], count=6)
    for words, lines in cases.items():
        message = refused(written(tmp_path, lines))
        assert words in message, (words, message)
        assert "Nothing was imported" in message
    assert second["id"] not in {m.id for m in fresh.state.souls["pippa"].memories}
    assert fresh.state.head("pippa") == "r0"


def test_an_unknown_members_private_memories_are_refused_with_their_count(
    exported: list[str], fresh: ReferenceEngine, tmp_path: Path
) -> None:
    private = json.loads(exported[1])
    stranger = {**private, "id": "m-stranger", "said_by": {"member": "999", "name": "Eve"}}
    lines = with_header([*exported, json.dumps(stranger) + "\n"], count=6)

    message = refused(written(tmp_path, lines))

    assert "1 private memories belong to 1 member(s)" in message
    assert "999" in message
    assert fresh.state.head("pippa") == "r0"


def test_an_id_the_engine_keeps_with_another_text_refuses_the_whole_import(
    exported: list[str], fresh: ReferenceEngine, tmp_path: Path
) -> None:
    last = json.loads(exported[-1])
    fresh.state.remember("pippa", "Something else entirely.")
    with fresh.database.write() as cursor:
        cursor.run("UPDATE engine_items SET id = ? WHERE soul = 'pippa'", [last["id"]])

    message = refused(written(tmp_path, exported))

    assert last["id"] in message
    assert "another text" in message
    assert len(fresh.state.souls["pippa"].memories) == 1


def test_an_import_cut_off_half_way_is_finished_by_running_it_again(
    exported: list[str], fresh: ReferenceEngine, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(soul_moves, "BATCH_ITEMS", 2)
    sent = soul_moves.send_batch

    def cut_off(soul: Any, batch: Any, *, check_only: bool, after: Any) -> Any:
        answer = sent(soul, batch, check_only=check_only, after=after)
        if not check_only:
            fresh.set_fault("down")  # the engine goes away after the first batch
        return answer

    monkeypatch.setattr(soul_moves, "send_batch", cut_off)
    path = written(tmp_path, exported)
    message = refused(path)
    assert "run the same command again" in message
    assert len(fresh.state.souls["pippa"].memories) == 2

    fresh.reset()
    monkeypatch.setattr(soul_moves, "send_batch", sent)
    call_command("memory_import", "pippa", str(path))

    texts = [m.text for m in fresh.state.souls["pippa"].memories]
    assert sorted(texts) == sorted(json.loads(line)["text"] for line in exported[1:])
