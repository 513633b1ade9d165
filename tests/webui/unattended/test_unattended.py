"""Turns with no human in them: schedules, a runner that starts each due job exactly once, runs
recorded with their outcome, and the Soul Stream page."""

import threading
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from tests.support.concurrently import in_threads
from tests.support.fakes import FailingAdapter
from webui.models import Conversation, ScheduledJob, Soul, UnattendedRun, Vessel
from webui.schedules import next_run_after, schedule_problem
from webui.unattended.display import when_said
from webui.unattended.runner import claim_due_jobs, run_due_jobs, run_wake
from webui.vessels import registry

pytestmark = pytest.mark.django_db

AT = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("every 15m", AT + timedelta(minutes=15)),
        ("every 30s", AT + timedelta(seconds=30)),
        ("EVERY 2h", AT + timedelta(hours=2)),
        ("every 1d", AT + timedelta(days=1)),
        ("0 7 * * *", datetime(2026, 12, 3, 7, 0, tzinfo=UTC)),
        ("*/20 * * * *", datetime(2026, 12, 2, 9, 40, tzinfo=UTC)),
    ],
)
def test_schedules_give_the_next_time(schedule: str, expected: datetime) -> None:
    assert schedule_problem(schedule) is None
    assert next_run_after(schedule, AT) == expected


@pytest.mark.parametrize("schedule", ["every 0m", "every 5 weeks", "sometimes", "* * *", ""])
def test_a_bad_schedule_is_a_clear_validation_error(
    schedule: str, soul: Soul, offline_vessel: Vessel
) -> None:
    job = ScheduledJob(name="j", soul=soul, vessel=offline_vessel, schedule=schedule)

    with pytest.raises(ValidationError) as invalid:
        job.full_clean()

    assert "schedule" in invalid.value.message_dict


@pytest.fixture
def make_job(soul: Soul, offline_vessel: Vessel) -> Any:
    def make(**fields: Any) -> ScheduledJob:
        fields.setdefault("name", "Morning note")
        fields.setdefault("prompt", "Write the morning note.")
        fields.setdefault("schedule", "every 15m")
        fields.setdefault("next_run_at", timezone.now() - timedelta(seconds=1))
        return ScheduledJob.objects.create(soul=soul, vessel=offline_vessel, **fields)

    return make


def test_a_due_job_runs_once_in_a_job_conversation_and_is_recorded(make_job: Any) -> None:
    job = make_job()

    runs = run_due_jobs()
    again = run_due_jobs()

    assert len(runs) == 1
    assert again == []
    run = runs[0]
    assert run.outcome == "succeeded"
    assert run.finished_at is not None
    conversation = run.conversation
    assert (conversation.kind, conversation.viewer) == ("job", None)
    assert [m.role for m in conversation.messages.order_by("sequence")] == ["user", "assistant"]
    assert conversation.messages.first().content == "Write the morning note."
    job.refresh_from_db()
    assert job.next_run_at > timezone.now() + timedelta(minutes=14)


def test_disabled_and_future_jobs_do_not_run(make_job: Any) -> None:
    make_job(enabled=False)
    make_job(next_run_at=timezone.now() + timedelta(hours=1))

    assert run_due_jobs() == []


def test_a_failed_turn_is_recorded_as_a_failed_run(
    make_job: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", FailingAdapter)
    make_job()

    (run,) = run_due_jobs()

    assert run.outcome == "failed"
    assert "overloaded" in run.error


def test_without_a_memory_extension_the_run_says_it_carried_none(make_job: Any) -> None:
    make_job()

    (run,) = run_due_jobs()

    assert run.memory == {"source": "none", "reason": "no memory extension is installed"}


@pytest.mark.django_db(transaction=True)
def test_two_runners_start_a_due_job_exactly_once(make_job: Any) -> None:
    for index in range(5):
        make_job(name=f"job {index}")

    def runner(start: threading.Barrier) -> list[int]:
        start.wait()
        return [job.pk for job in claim_due_jobs()]

    claimed, errors = in_threads(runner)

    assert errors == []
    everything = [pk for batch in claimed for pk in batch]
    assert sorted(everything) == sorted(ScheduledJob.objects.values_list("pk", flat=True))
    assert len(everything) == len(set(everything)) == 5


def test_run_scheduler_runs_what_is_due(make_job: Any) -> None:
    make_job()
    out = StringIO()

    call_command("run_scheduler", stdout=out)

    assert "Scheduled job for Pippa: succeeded" in out.getvalue()
    assert UnattendedRun.objects.count() == 1


def test_soul_stream_wake_command_wakes_the_soul(soul: Soul, offline_vessel: Vessel) -> None:
    out = StringIO()

    call_command("soul_stream_wake", "--soul", "pippa", stdout=out)

    run = UnattendedRun.objects.get()
    assert run.kind == "wake"
    assert run.conversation.kind == "wake"
    assert "Wake for Pippa: succeeded." in out.getvalue()


def test_soul_stream_wake_names_a_missing_soul(offline_vessel: Vessel) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No soul with the slug 'nobody'"):
        call_command("soul_stream_wake", "--soul", "nobody")


def test_the_stream_page_shows_unattended_posts_newest_first_in_the_households_words(
    user: Any, soul: Soul, offline_vessel: Vessel, make_job: Any
) -> None:
    make_job(name="Morning note", prompt="first post")
    (job_run,) = run_due_jobs()
    later = run_wake(soul=soul)
    woke_at = timezone.now() + timedelta(minutes=1)
    UnattendedRun.objects.filter(pk=later.pk).update(started_at=woke_at)
    client = Client()
    client.force_login(user)

    page = client.get("/stream/").content.decode()

    wrote_at = timezone.localtime(job_run.started_at).strftime("%H:%M")
    woke = f"Pippa woke at {timezone.localtime(woke_at):%H:%M} and wrote:"
    wrote = f"Pippa wrote “Morning note” at {wrote_at}:"
    assert woke in page
    assert wrote in page
    assert page.index(woke) < page.index(wrote)
    assert "I heard: “first post”" in page
    assert "Pippa had no memories to go on this time." in page
    # The records behind it are the admin's: no reason codes or kinds of run on the page.
    assert "no memory extension is installed" not in page
    assert "Scheduled job" not in page
    assert "Wake now" not in page  # for those who may add unattended runs


def test_a_failed_run_says_so_in_plain_words(
    make_job: Any, user: Any, make_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", FailingAdapter)
    make_job(name="Morning note")
    (run,) = run_due_jobs()
    client = Client()
    client.force_login(user)

    page = client.get("/stream/").content.decode()

    assert run.outcome == "failed"
    assert "Pippa was to write “Morning note” at" in page
    assert "but could not." in page
    # A member reads plain words; the raw error (a vessel's, a provider's) is for whoever runs
    # the household's settings.
    assert "Pippa could not write this one." in page
    assert run.error not in page
    keeper = make_user("keeper")
    keeper.user_permissions.add(Permission.objects.get(codename="add_unattendedrun"))
    client.force_login(keeper)
    assert f"What went wrong: {run.error}" in client.get("/stream/").content.decode()


def test_only_an_account_that_may_add_unattended_runs_wakes_a_soul_from_the_page(
    user: Any, make_user: Any, soul: Soul, offline_vessel: Vessel
) -> None:
    for account in (user, make_user("staff", is_staff=True)):
        refused = Client()
        refused.force_login(account)
        assert "Wake now" not in refused.get("/stream/").content.decode()
        assert refused.post("/stream/wake/", {"soul": soul.pk}).status_code == 403
    assert not UnattendedRun.objects.exists()

    waker = make_user("root")
    waker.user_permissions.add(Permission.objects.get(codename="add_unattendedrun"))
    staff = Client()
    staff.force_login(waker)
    assert "Wake now" in staff.get("/stream/").content.decode()
    response = staff.post("/stream/wake/", {"soul": soul.pk}, follow=True)

    assert UnattendedRun.objects.get().kind == "wake"
    assert "Pippa woke and posted." in response.content.decode()


def test_the_stream_page_needs_a_login() -> None:
    response = Client().get("/stream/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_job_conversation_is_not_in_any_members_chat_list(user: Any, make_job: Any) -> None:
    make_job()
    run_due_jobs()
    client = Client()
    client.force_login(user)

    assert Conversation.objects.filter(kind="job").count() == 1
    assert "Morning note" not in client.get("/").content.decode()


@pytest.mark.parametrize(
    ("moment", "said"),
    [
        (datetime(2026, 12, 2, 9, 12, tzinfo=UTC), "at 09:12"),
        (datetime(2026, 12, 1, 23, 5, tzinfo=UTC), "yesterday at 23:05"),
        (datetime(2026, 11, 28, 7, 0, tzinfo=UTC), "on 28 Nov at 07:00"),
        (datetime(2025, 12, 2, 7, 0, tzinfo=UTC), "on 2 Dec 2025 at 07:00"),
    ],
)
def test_a_post_says_when_in_words_a_family_uses(moment: datetime, said: str) -> None:
    assert when_said(moment, now=AT) == said
