"""Migration 0018 gives every existing pin record its cause from its reason, and changes no
reason: a household upgrading keeps its pin history, now filterable by cause."""

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("pippa_memory", "0017_outbox_ring_trigger")]
AFTER = [("pippa_memory", "0018_pin_record_cause")]

RECORDS = [
    ("absent", "block_too_large", "block_too_large"),
    ("absent", "too_large", "answer_too_large"),
    ("absent", "wrong_shape", "unusable_answer"),
    ("absent", "connection_failed", "unreachable"),
    ("absent", "http_error", "engine_error"),
    ("absent", "http_410", "gone"),
    ("absent", "temporary", "temporary"),
    ("absent", "stale_block", "stale_block"),
    ("pinned", "", "first_pin"),
    ("pinned", "engine_recovered", "engine_recovered"),
    ("repin_requested", "member_refresh", "member_refresh"),
    ("repin_requested", "The block looked wrong", "admin_repin"),
]


def migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_pin_records_get_their_cause_and_keep_their_reason(
    conversation: Any,
) -> None:
    old = migrate(BEFORE)
    PinRecord = old.get_model("pippa_memory", "PinRecord")
    for outcome, reason, _ in RECORDS:
        PinRecord.objects.create(
            conversation_id=conversation.pk, soul_id=conversation.soul_id, outcome=outcome,
            reason=reason,
        )  # fmt: skip

    new = migrate(AFTER)
    migrate([("pippa_memory", leaf) for leaf in latest_leaves()])

    found = new.get_model("pippa_memory", "PinRecord").objects.order_by("id")
    assert [(r.outcome, r.reason, r.cause) for r in found] == RECORDS


def latest_leaves() -> list[str]:
    executor = MigrationExecutor(connection)
    return [name for app, name in executor.loader.graph.leaf_nodes() if app == "pippa_memory"]
