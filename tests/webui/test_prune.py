"""Nothing grows without bound: ``manage.py prune`` deletes unattended runs and temporary
conversations past their configurable windows, in bounded batches with a progress bar,
counts only with ``--dry-run``, fills in the plug-ins' rows through an extension point, and runs
once a day from the scheduler."""

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from webui.extensions import TurnExtension
from webui.models import Conversation, DailyChore, Message, UnattendedRun
from webui.prune_windows import PruneTarget

pytestmark = pytest.mark.django_db

WINDOWS = {
    "MAX_TOOL_ROUNDS": 4,
    "MAX_MESSAGE_CHARS": 20000,
    "PRUNE_UNATTENDED_RUNS_DAYS": 90.0,
    "PRUNE_TEMPORARY_DAYS": 1.0,
    "PRUNE_BATCH_SIZE": 500,
}


@pytest.fixture
def windows(settings: Any) -> dict[str, Any]:
    """The host's windows for this test (the documented defaults); change entries to taste."""
    settings.WEBUI = dict(WINDOWS)
    return settings.WEBUI


def days_ago(days: float) -> Any:
    return timezone.now() - timedelta(days=days)


def temporary_chat(make_conversation: Any, *, created: float, last_message: float) -> Conversation:
    conversation = make_conversation(temporary=True)
    Conversation.objects.filter(pk=conversation.pk).update(created_at=days_ago(created))
    message = Message.objects.create(conversation=conversation, role="user", content="hi")
    Message.objects.filter(pk=message.pk).update(created_at=days_ago(last_message))
    return conversation


def unattended_run(make_conversation: Any, *, started: float) -> UnattendedRun:
    conversation = make_conversation(kind=Conversation.Kind.JOB, viewer=None)
    Conversation.objects.filter(pk=conversation.pk).update(created_at=days_ago(started))
    return UnattendedRun.objects.create(
        kind="job",
        soul=conversation.soul,
        conversation=conversation,
        outcome="succeeded",
        started_at=days_ago(started),
    )


@pytest.fixture
def household_rows(make_conversation: Any) -> dict[str, Any]:
    """Rows on both sides of each window."""
    return {
        "old_temporary": temporary_chat(make_conversation, created=3, last_message=2),
        "temporary_still_talking": temporary_chat(make_conversation, created=3, last_message=0),
        "fresh_temporary": temporary_chat(make_conversation, created=0.1, last_message=0.1),
        "kept_chat": make_conversation(),
        "old_run": unattended_run(make_conversation, started=100),
        "fresh_run": unattended_run(make_conversation, started=10),
    }


def prune(*args: str) -> str:
    out = StringIO()
    call_command("prune", *args, stdout=out)
    return out.getvalue()


def test_a_dry_run_prints_what_is_past_its_window_and_deletes_nothing(
    windows: dict[str, Any], household_rows: dict[str, Any]
) -> None:
    before = (Conversation.objects.count(), UnattendedRun.objects.count())

    output = prune("--dry-run")

    assert "unattended runs (started more than 90 days ago): 1 would be deleted" in output
    assert "unattended conversations (started more than 90 days ago): 1 would be deleted" in output
    assert "temporary conversations (quiet for more than 1 day): 1 would be deleted" in output
    assert (Conversation.objects.count(), UnattendedRun.objects.count()) == before


def test_prune_deletes_only_the_rows_past_their_window(
    windows: dict[str, Any], household_rows: dict[str, Any]
) -> None:
    rows = household_rows

    output = prune("--no-progress")

    assert "Deleted 3 row(s)." in output
    remaining = set(Conversation.objects.values_list("pk", flat=True))
    assert rows["old_temporary"].pk not in remaining
    assert rows["old_run"].conversation_id not in remaining
    assert {
        rows["temporary_still_talking"].pk,
        rows["fresh_temporary"].pk,
        rows["kept_chat"].pk,
        rows["fresh_run"].conversation_id,
    } <= remaining
    assert list(UnattendedRun.objects.all()) == [rows["fresh_run"]]
    assert not Message.objects.filter(conversation_id=rows["old_temporary"].pk).exists()


def test_the_windows_are_configurable(
    windows: dict[str, Any], household_rows: dict[str, Any]
) -> None:
    windows.update(PRUNE_UNATTENDED_RUNS_DAYS=5, PRUNE_TEMPORARY_DAYS=0.05)

    prune("--no-progress")

    assert not UnattendedRun.objects.exists()  # the fresh run, 10 days old, is past 5 days
    assert Conversation.objects.filter(temporary=True).count() == 1  # the one still talking


def test_a_window_of_zero_keeps_those_rows_for_ever(
    windows: dict[str, Any], household_rows: dict[str, Any]
) -> None:
    windows.update(PRUNE_TEMPORARY_DAYS=0)

    output = prune("--no-progress")

    assert "temporary conversations: kept for ever (WEBUI_PRUNE_TEMPORARY_DAYS=0)" in output
    assert Conversation.objects.filter(temporary=True).count() == 3


@pytest.mark.parametrize("value", [-1, "soon"])
def test_a_bad_window_is_refused_by_name_and_deletes_nothing(
    windows: dict[str, Any], household_rows: dict[str, Any], value: Any
) -> None:
    windows.update(PRUNE_TEMPORARY_DAYS=value)

    with pytest.raises(CommandError, match="WEBUI_PRUNE_TEMPORARY_DAYS must be a number of days"):
        prune("--no-progress")

    assert UnattendedRun.objects.count() == 2
    assert Conversation.objects.filter(temporary=True).count() == 3


def test_rows_are_deleted_in_bounded_batches_under_a_progress_bar(
    windows: dict[str, Any], make_conversation: Any
) -> None:
    for _ in range(5):
        temporary_chat(make_conversation, created=3, last_message=3)

    out, err = StringIO(), StringIO()
    with CaptureQueriesContext(connection) as queries:
        call_command("prune", "--batch-size", "2", stdout=out, stderr=err)

    deletes = [q["sql"] for q in queries if q["sql"].startswith('DELETE FROM "webui_conversation"')]
    assert len(deletes) == 3  # 2 + 2 + 1
    assert "temporary conversations" in err.getvalue()
    assert "5/5" in err.getvalue()  # tqdm's bar, on stderr
    assert not Conversation.objects.exists()


def test_a_bad_batch_size_is_refused(windows: dict[str, Any]) -> None:
    with pytest.raises(CommandError, match="--batch-size must be at least 1"):
        prune("--batch-size", "0")


class ExpiringNotes(TurnExtension):
    """A plug-in that keeps rows of its own: here, temporary conversations under another name."""

    name = "expiring-notes"

    def prune_targets(self, *, now: Any) -> list[PruneTarget]:
        old = Conversation.objects.filter(title="plug-in row", created_at__lt=now)
        return [PruneTarget(label="plug-in rows", rule="all of them", queryset=old)]


def test_a_plug_in_adds_its_own_rows_through_the_extension_point(
    windows: dict[str, Any], make_conversation: Any, extension: Any
) -> None:
    extension(ExpiringNotes())
    make_conversation(title="plug-in row")
    kept = make_conversation(title="the household's")

    assert "plug-in rows (all of them): 1 would be deleted" in prune("--dry-run")
    prune("--no-progress")

    assert list(Conversation.objects.all()) == [kept]


def test_the_scheduler_prunes_once_a_day_and_a_restart_neither_repeats_nor_skips_it(
    windows: dict[str, Any], make_conversation: Any
) -> None:
    temporary_chat(make_conversation, created=3, last_message=3)

    call_command("run_scheduler", stdout=StringIO())
    assert not Conversation.objects.exists()
    chore = DailyChore.objects.get(name="prune")
    assert chore.last_day == timezone.localdate()
    assert chore.last_result == {"temporary conversations": 1}

    # Restarted the same day: the day's prune has run, so it does not run again.
    temporary_chat(make_conversation, created=3, last_message=3)
    call_command("run_scheduler", stdout=StringIO())
    assert Conversation.objects.count() == 1

    # The runner was down when the next day began: its first tick that day prunes.
    DailyChore.objects.update(last_day=timezone.localdate() - timedelta(days=1))
    out = StringIO()
    call_command("run_scheduler", stdout=out)
    assert not Conversation.objects.exists()
    assert "pruned 1 row(s)" in out.getvalue()


def test_a_bad_window_is_reported_by_the_system_checks(windows: dict[str, Any]) -> None:
    from django.core import checks

    windows.update(PRUNE_UNATTENDED_RUNS_DAYS=-2)

    found = [m for m in checks.run_checks() if m.id == "webui.E001"]

    assert [m.msg for m in found] == [
        "WEBUI_PRUNE_UNATTENDED_RUNS_DAYS must be a number of days, 0 or more (0 keeps the rows "
        "for ever), not -2."
    ]
