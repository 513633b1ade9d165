"""What memory costs a turn in SQL: one query more than memory off (the outbox row, in the turn's
own transaction), and one more when the pinned block holds items (its check against tombstones,
made even when the block is kept in the process); the same at the 3rd turn as at the 40th, and no
query for questions out."""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reference_engine.server import ReferenceEngine
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

#: Queries of a later chat turn on the offline vessel with memory off (the host's own), on both
#: backends. A change here is a regression to explain, or a saving to write down. (27: the history
#: cache reads the shared deletions version, so a conversation deleted by another process leaves
#: this one's kept history at once, ``webui/prompt/history.py``; and the turn notes on its lease the
#: message it answers, so a crash keeps its partial reply against it, ``webui/turns/lock.py``, while
#: its claim of a free conversation is one UPDATE and its stop flag one read. 30: the open-replies
#: cap is taken with the claim, ``webui/turns/lock.py``, so the claim is a transaction (its
#: SAVEPOINT and RELEASE here, the test's own transaction around it) holding the member's row lock
#: (one SELECT ... FOR NO KEY UPDATE, its own statement because a statement waiting for a row lock
#: keeps the snapshot it took before) and the UPDATE, whose WHERE counts the live leases itself,
#: ``webui/turns/reply_cap.py``.)
HOST_QUERIES = 30


def queries_of_turn(conversation: Conversation, text: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        run_turn(conversation=conversation, text=text)
    return [q["sql"] for q in queries.captured_queries]


def later_turn_queries(conversation: Conversation, *, at: int) -> list[str]:
    for index in range(at - 1):
        run_turn(conversation=conversation, text=f"turn {index}")
    return queries_of_turn(conversation, "how is the garden?")


def test_a_later_turn_with_memory_off_makes_the_hosts_queries_only(
    configure: Any, make_conversation: Any
) -> None:
    configure(ENABLED=False)

    assert len(later_turn_queries(make_conversation(), at=3)) == HOST_QUERIES


@pytest.mark.parametrize("at", [3, 40])
def test_a_later_turn_with_memory_on_adds_only_its_outbox_row(
    memory_on: ReferenceEngine, make_conversation: Any, at: int
) -> None:
    queries = later_turn_queries(make_conversation(), at=at)

    memory = [q for q in queries if "pippa_memory" in q]
    assert len(queries) == HOST_QUERIES + 1, queries
    assert len(memory) == 1
    assert memory[0].startswith('INSERT INTO "pippa_memory_outboxevent"')
    assert not [r for r in memory_on.received if r["path"] != "/v1/souls/pippa/head"]


def test_a_later_turn_whose_block_holds_items_adds_only_its_tombstone_check(
    memory_on: ReferenceEngine, make_conversation: Any
) -> None:
    memory_on.state.remember("pippa", "Alice takes her tea with honey.")

    queries = later_turn_queries(make_conversation(), at=3)

    memory = [q for q in queries if "pippa_memory" in q]
    assert len(queries) == HOST_QUERIES + 2, queries
    assert len(memory) == 2, memory
    assert memory[0].startswith("SELECT")
    assert '"pippa_memory_itemtombstone"' in memory[0]
    assert memory[1].startswith('INSERT INTO "pippa_memory_outboxevent"')
