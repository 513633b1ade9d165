"""Curation goes through the site's real brain door (the Procfile's gunicorn, signed as the door
checks): the offline vessel's choice is the newest, recorded as such, and moves no head; a pool is
curated again only after 20 new memories; a member's private memories are offered on their own.
Briefs and bundles stay within the budget too."""

from typing import Any

import pytest

from pippa_memory.models import BrainCall
from reference_engine.brain_client import BrainClient
from reference_engine.curation import NEWEST
from reference_engine.server import ReferenceEngine
from tests.reference_engine.conftest import TOKEN
from tests.reliability.test_brain_door_crash import (  # noqa: F401 - fixtures used by name
    ROOT,
    gunicorn,
)
from tests.support.brain_door import NEW_SECRET
from tests.support.engine_calls import call
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db(transaction=True)


def fact(n: int) -> str:
    return f"Household fact {n}: the blue tin on shelf {n % 7} holds the good tea for guests."


def curations(engine: ReferenceEngine) -> list[tuple[str, int, str]]:
    with engine.database.read() as cursor:
        rows = cursor.run("SELECT pool, rev, judged_by FROM engine_curations ORDER BY rev").all()
    return [(pool, int(rev), judged_by) for pool, rev, judged_by in rows]


@pytest.mark.xdist_group("production_server")
def test_the_offline_vessels_curation_is_the_newest_recorded_as_such_and_moves_no_head(
    engine_database: str,
    gunicorn: tuple[str, Any],  # noqa: F811
) -> None:
    Soul.objects.create(slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa"))
    Vessel.objects.create(slug="brain", name="Brain", adapter="offline", brain_priority=1)
    brain = BrainClient(f"{gunicorn[0]}/api/memory/brain/", NEW_SECRET, timeout=30)
    engine = ReferenceEngine(
        token=TOKEN, database=engine_database, block_chars=1000, brain=brain
    )  # not started: the test runs the thinker's curation round itself
    try:
        state = engine.state
        for n in range(40):
            state.remember("pippa", fact(n))
        for n in range(3):
            state.remember("pippa", f"Alice's own {n}.", scope="private", member="7", name="Alice")
        before = state.head("pippa")
        assert state.thinker.curator.curate_due(force=True) == 0  # no choice moved the head
        assert state.head("pippa") == before
        assert curations(engine) == [("", int(before[1:]), NEWEST)]  # Alice's 3 still fit
        calls = BrainCall.objects.filter(role="curate")
        assert calls.count() == 1
        offered = calls.get().response_body or ""  # the offline vessel keeps all it was offered
        household_ids = [m.id for m in state.souls["pippa"].memories if m.scope == "household"]
        assert household_ids[-1] in offered
        alices = [m.id for m in state.souls["pippa"].memories if m.scope == "private"]
        assert not any(item_id in offered for item_id in alices)  # never beside the household's
        assert state.thinker.curator.curate_due(force=True) == 0
        assert BrainCall.objects.filter(role="curate").count() == 1  # nothing new: not again
        for n in range(40, 60):
            state.remember("pippa", fact(n))
        state.thinker.curator.curate_due(force=True)
        assert BrainCall.objects.filter(role="curate").count() == 2  # 20 new: curated again
    finally:
        engine.database.close()


def test_a_brief_and_a_bundle_stay_within_the_budget(engine_database: str) -> None:
    engine = ReferenceEngine(token=TOKEN, database=engine_database, block_chars=1000).start()
    try:
        for n in range(60):
            engine.state.remember("pippa", fact(n))
        brief = call(engine.url, "POST", "/v1/wakes/brief", json={"soul": "pippa", "wake": {}})
        assert brief.status_code == 200, brief.text
        assert len(brief.json()["brief"]) <= 1000
        assert fact(59) in brief.json()["brief"]
        job = {"id": "job-" + "9" * 300, "name": "A very long job name " * 30}
        bundle = call(engine.url, "POST", "/v1/bundles", json={"soul": "pippa", "job": job})
        assert bundle.status_code == 200, bundle.text
        assert len(bundle.json()["bundle"]) <= 1000
        assert fact(59) in bundle.json()["bundle"]
    finally:
        engine.stop()
