"""The restore drill, on SQLite and PostgreSQL, over real sockets: a household remembers, the admin
exports the soul (``manage.py memory_export``), the engine is wiped (a fresh database), the admin
imports (``manage.py memory_import``): the same memories come back with the same scopes, owners and
marks, recall finds the same first item for the same questions, a conversation pinned before
re-pins once, and the revisions move forward."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from pippa_memory.engine.client import BREAKER
from pippa_memory.models import PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import call, recall
from tests.support.engine_token import TOKEN
from webui.models import Conversation

pytestmark = pytest.mark.django_db

QUESTIONS = ["tea", "bins", "chess surprise", "biscuits", "garden watered", "boiler code"]
LUND = "Our dentist is Dr Lund."
BERG = "Our dentist is now Dr Berg at the Elm Street clinic."


@pytest.fixture
def point_memory_at(settings: Any) -> Iterator[Any]:
    def point(engine: ReferenceEngine) -> None:
        settings.PIPPA_MEMORY = {
            **settings.PIPPA_MEMORY,
            "ENABLED": True,
            "URL": engine.url,
            "TOKEN": TOKEN,
            "OUTBOX_WAKE_ADDRESS": "",
        }
        BREAKER.reset()

    yield point
    BREAKER.reset()


def remember_a_household(engine: ReferenceEngine, alice: Any, bob: Any) -> None:
    state = engine.state
    a, b = str(alice.pk), str(bob.pk)
    state.remember(
        "pippa", "Alice hides the biscuits in the tea tin.", scope="private", member=a, name="Alice"
    )
    state.remember("pippa", "The bins go out on Tuesday.", member=a, name="Alice")
    state.remember(
        "pippa",
        "Bob is planning a surprise for the chess club.",
        scope="private",
        member=b,
        name="Bob",
    )
    state.remember("pippa", "The boiler code is 4471.", member=b, name="Bob")
    state.remember("pippa", "The garden was watered.")
    kept = state.souls["pippa"].memories[1].id
    state.change_item("pippa", kept, viewer=a, keep=True)
    state.remember("pippa", LUND, scope="private", member=a, name="Alice")
    lund = state.souls["pippa"].memories[-1].id
    for n in range(30):  # more than one page and one batch
        state.remember("pippa", f"Tea note {n}: green tea on day {n}.", member=b, name="Bob")
    corrected = call(
        engine.url,
        "POST",
        f"/v1/souls/pippa/items/{lund}/correct",
        json={"viewer": a, "text": BERG},
    )
    assert corrected.status_code == 200, corrected.text


def replaced_pairs(engine: ReferenceEngine) -> list[tuple[str, str, str | None]]:
    """``(replaced text, the text that replaced it, its owner)`` of every replaced memory."""
    with engine.database.read() as cursor:
        rows = cursor.run(
            "SELECT o.text, n.text, o.owner FROM engine_items o JOIN engine_items n "
            "ON n.seq = o.superseded_by WHERE o.superseded_rev IS NOT NULL ORDER BY o.seq"
        ).all()
    return [tuple(row) for row in rows]


def snapshot(engine: ReferenceEngine) -> list[tuple[Any, ...]]:
    return [
        (m.id, m.text, m.at, m.scope, m.owner, (m.said_by or {}).get("name"), m.keep)
        for m in engine.state.souls["pippa"].memories
    ]


def first_items(engine: ReferenceEngine, viewers: list[str]) -> dict[tuple[str, str], str]:
    return {
        (viewer, question): recall(engine.url, question, viewer=viewer)["items"][0]["id"]
        for viewer in viewers
        for question in QUESTIONS
    }


def test_export_wipe_import_brings_back_the_same_memory_and_pinned_chats_repin_once(
    engine_database: str,
    another_engine_database: str,
    point_memory_at: Any,
    user: Any,
    make_user: Any,
    make_conversation: Any,
    soul: Any,
    tmp_path: Path,
) -> None:
    alice, bob = user, make_user("bob")
    old = ReferenceEngine(token=TOKEN, database=engine_database).start()
    try:
        remember_a_household(old, alice, bob)
        point_memory_at(old)
        before, old_head = snapshot(old), old.state.head("pippa")
        replaced = replaced_pairs(old)
        asked = first_items(old, [str(alice.pk), str(bob.pk)])
        chat = make_conversation(viewer=alice)
        Conversation.objects.filter(pk=chat.pk).update(
            pinned_head=old_head, pinned_at=timezone.now()
        )
        export = tmp_path / "pippa.jsonl"
        call_command("memory_export", "pippa", str(export))
    finally:
        old.stop()

    new = ReferenceEngine(token=TOKEN, database=another_engine_database).start()
    try:
        point_memory_at(new)
        call_command("memory_import", "pippa", str(export))
        call_command("memory_import", "pippa", str(export))  # again: nothing doubled, no re-pin

        assert snapshot(new) == before
        # the correction moved too: Dr Lund stays replaced by Dr Berg, Alice's, in history only
        assert replaced_pairs(new) == replaced == [(LUND, BERG, str(alice.pk))]
        assert LUND not in str(recall(new.url, "dentist", viewer=str(alice.pk)))
        assert first_items(new, [str(alice.pk), str(bob.pk)]) == asked
        assert int(new.state.head("pippa")[1:]) > int(old_head[1:])
        chat.refresh_from_db()
        assert chat.pinned_head is None  # it pins the new head at its next turn
        repins = PinRecord.objects.filter(
            conversation=chat, outcome=PinRecord.Outcome.REPIN_REQUESTED
        )
        assert [r.reason for r in repins] == ["imported"]
    finally:
        new.stop()
