"""The plug-in's rows in ``manage.py prune``: brain-door audit rows and delivered and dead turn events
go after their windows, pending events never; pin records go with their conversation, and old
ones after their window, each conversation's newest record and newest pin decision kept."""

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from pippa_memory.models import BrainCall, ItemTombstone, OutboxEvent, PinRecord
from webui.models import Conversation, Message
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


def days_ago(days: float) -> Any:
    return timezone.now() - timedelta(days=days)


def prune(*args: str) -> str:
    out = StringIO()
    call_command("prune", "--no-progress", *args, stdout=out)
    return out.getvalue()


def brain_call(name: str, *, age: float) -> BrainCall:
    call = BrainCall.objects.create(request_id=name, outcome="answered", status_code=200)
    BrainCall.objects.filter(pk=call.pk).update(created_at=days_ago(age))
    return call


def event(conversation: Conversation, *, status: str, age: float, **fields: Any) -> OutboxEvent:
    message = Message.objects.create(conversation=conversation, role="user", content="x")
    return OutboxEvent.objects.create(
        soul=conversation.soul,
        conversation_id=conversation.id,
        message_id=message.id,
        payload={},
        status=status,
        created_at=days_ago(age),
        **fields,
    )


@pytest.fixture
def plug_in_rows(memory_settings: Any, conversation: Conversation) -> dict[str, Any]:
    return {
        "old_call": brain_call("old", age=40),
        "fresh_call": brain_call("fresh", age=5),
        "old_delivered": event(conversation, status="delivered", age=20, delivered_at=days_ago(10)),
        "fresh_delivered": event(
            conversation, status="delivered", age=20, delivered_at=days_ago(2)
        ),
        "old_dead": event(conversation, status="dead", age=40),
        "revived_dead": event(conversation, status="dead", age=40, revived_at=days_ago(5)),
        "old_pending": event(conversation, status="pending", age=100),
    }


def test_a_dry_run_counts_the_plug_ins_rows_and_deletes_nothing(
    plug_in_rows: dict[str, Any],
) -> None:
    output = prune("--dry-run")

    assert "brain-door audit rows (older than 30 days): 1 would be deleted" in output
    assert "delivered turn events (delivered more than 7 days ago): 1 would be deleted" in output
    assert (
        "dead turn events (written or revived more than 30 days ago): 1 would be deleted" in output
    )
    assert BrainCall.objects.count() == 2
    assert OutboxEvent.objects.count() == 5


def test_old_audit_rows_and_delivered_and_dead_events_go_and_pending_ones_never(
    plug_in_rows: dict[str, Any],
) -> None:
    rows = plug_in_rows

    prune()

    assert list(BrainCall.objects.all()) == [rows["fresh_call"]]
    assert set(OutboxEvent.objects.values_list("pk", flat=True)) == {
        rows["fresh_delivered"].pk,
        rows["revived_dead"].pk,
        rows["old_pending"].pk,
    }


def test_the_plug_ins_windows_are_configurable(
    plug_in_rows: dict[str, Any], configure: Any
) -> None:
    configure(PRUNE_BRAIN_CALLS_DAYS=1, PRUNE_DELIVERED_EVENTS_DAYS=0)

    output = prune()

    assert not BrainCall.objects.exists()
    assert "delivered turn events: kept for ever (PIPPA_MEMORY_PRUNE_DELIVERED_EVENTS_DAYS=0)" in (
        output
    )
    assert OutboxEvent.objects.filter(status="delivered").count() == 2


def test_a_bad_plug_in_window_is_refused_by_name_and_deletes_nothing(
    plug_in_rows: dict[str, Any], configure: Any
) -> None:
    configure(PRUNE_DEAD_EVENTS_DAYS=-3)

    with pytest.raises(CommandError, match="PIPPA_MEMORY_PRUNE_DEAD_EVENTS_DAYS must be a number"):
        prune()

    assert BrainCall.objects.count() == 2


def test_pin_records_live_exactly_as_long_as_their_conversation(
    memory_on: Any, make_conversation: Any
) -> None:
    kept = make_conversation()
    temporary = make_conversation(temporary=True)
    for conversation in (kept, temporary):
        run_turn(conversation=conversation, text="hello")
    Conversation.objects.filter(pk=temporary.pk).update(created_at=days_ago(3))
    Message.objects.filter(conversation=temporary).update(created_at=days_ago(3))
    Conversation.objects.filter(pk=kept.pk).update(created_at=days_ago(3000))
    PinRecord.objects.update(created_at=days_ago(3000))

    prune()

    assert list(Conversation.objects.all()) == [kept]
    assert list(PinRecord.objects.values_list("conversation_id", flat=True)) == [kept.pk]


def test_forget_tombstones_go_after_their_window_and_recent_ones_stay(soul: Any) -> None:
    old = ItemTombstone.objects.create(soul=soul, item_id="m-old")
    recent = ItemTombstone.objects.create(soul=soul, item_id="m-recent")
    ItemTombstone.objects.filter(pk=old.pk).update(created_at=days_ago(31))

    prune()

    assert list(ItemTombstone.objects.values_list("pk", flat=True)) == [recent.pk]


def test_old_pin_records_go_after_their_window_but_each_conversations_newest_stay(
    memory_on: Any, make_conversation: Any, user: Any
) -> None:
    from pippa_memory.pins.records import request_repin

    busy, quiet = make_conversation(), make_conversation()
    for conversation in (busy, quiet):
        run_turn(conversation=conversation, text="hello")
    # A member who pressed "Bring up to date" again and again: a request and a pin each time.
    for index in range(20):
        busy.refresh_from_db()
        request_repin(conversation=busy, requested_by=user, reason="member_refresh")
        run_turn(conversation=busy, text=f"and now {index}")
    busy.refresh_from_db()
    request_repin(conversation=busy, requested_by=user, reason="member_refresh")  # not yet taken
    records = PinRecord.objects.filter(conversation=busy).order_by("-created_at", "-id")
    newest, newest_pin = records[0], records.exclude(outcome="repin_requested")[0]
    PinRecord.objects.update(created_at=days_ago(31))
    recent = PinRecord.objects.create(
        conversation=quiet, soul=quiet.soul, outcome="repin_requested", reason="member_refresh"
    )

    assert "pin records (written more than 30 days ago" in prune("--dry-run")
    prune()

    assert set(PinRecord.objects.filter(conversation=busy)) == {newest, newest_pin}
    assert PinRecord.objects.filter(conversation=quiet).count() == 2  # nothing superseded is old
    assert recent in PinRecord.objects.all()
    # The request kept is still taken by the next turn: one re-pin, recorded.
    busy.refresh_from_db()
    assert busy.pinned_at is None  # waiting for its next turn
    run_turn(conversation=busy, text="the pending request is still taken")
    busy.refresh_from_db()
    assert busy.pinned_at is not None
    assert PinRecord.objects.filter(conversation=busy).first().outcome == "pinned"
    assert PinRecord.objects.filter(conversation=busy).count() == 3
