"""A soul export holds to the forgets and make-privates recorded on this site, confirmed by the
engine or not (a change whose answer never came is treated as done for privacy): a memory
forgotten here, or one it replaced, is not in the file; one made private here is private in it.
Both databases."""

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory
from tests.support.lost_answers import LOST, SECRET, lose_the_answer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("soul")]

#: What the household keeps beside the secret: it must stay in the file.
KEPT = "The bins go out on Tuesday."


def exported(tmp_path: Path) -> list[dict[str, Any]]:
    """The memory lines of ``manage.py memory_export pippa``, the header checked against them."""
    path = tmp_path / "pippa.jsonl"
    call_command("memory_export", "pippa", str(path))
    header, *lines = (json.loads(line) for line in path.read_text("utf-8").splitlines())
    assert header["count"] == len(lines)
    return lines


@pytest.mark.parametrize("case", LOST)
def test_a_forget_the_engine_did_not_confirm_is_not_in_the_export(
    memory_on: ReferenceEngine, user: Any, tmp_path: Path, case: str
) -> None:
    add_memory(memory_on, KEPT, by=user)
    item = add_memory(memory_on, SECRET, scope="private", by=user)
    lose_the_answer(memory_on, case, f"/v1/souls/pippa/items/{item}")
    assert api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa").status_code == 202

    lines = exported(tmp_path)

    assert [line["text"] for line in lines] == [KEPT]


def test_a_memory_replaced_by_one_forgotten_here_is_not_in_the_export_either(
    memory_on: ReferenceEngine, user: Any, tmp_path: Path
) -> None:
    older = add_memory(memory_on, "The spare key is with Gran.", by=user)
    corrected = api_as(user).post(
        f"/api/memory/items/{older}/correct/?soul=pippa", {"text": SECRET}, format="json"
    )
    assert corrected.status_code == 200, corrected.content
    newer = corrected.json()["item"]["id"]
    assert {line["id"] for line in exported(tmp_path)} == {older, newer}
    lose_the_answer(memory_on, "failed_before", f"/v1/souls/pippa/items/{newer}")
    assert api_as(user).delete(f"/api/memory/items/{newer}/?soul=pippa").status_code == 202

    assert exported(tmp_path) == []


def test_a_make_private_the_engine_did_not_confirm_is_private_in_the_export(
    memory_on: ReferenceEngine, user: Any, tmp_path: Path
) -> None:
    add_memory(memory_on, KEPT, by=user)
    item = add_memory(memory_on, SECRET, by=user)
    lose_the_answer(memory_on, "failed_before", f"/v1/souls/pippa/items/{item}")
    made = api_as(user).patch(
        f"/api/memory/items/{item}/?soul=pippa", {"scope": "private"}, format="json"
    )
    assert made.status_code == 202, made.content
    engine_scopes = {m.text: m.scope for m in memory_on.state.souls["pippa"].memories}
    assert engine_scopes[SECRET] == "household"  # the engine never made it private

    scopes = {
        line["text"]: (line["scope"], line["said_by"]["member"]) for line in exported(tmp_path)
    }

    assert scopes == {KEPT: ("household", str(user.pk)), SECRET: ("private", str(user.pk))}
