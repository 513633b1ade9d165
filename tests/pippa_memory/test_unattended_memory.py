"""Unattended runs carry memory too: a job a deterministic bundle at a pinned revision, a wake a
curated brief; with the engine absent they still run and say why they carried none."""

from typing import Any

import pytest
from django.test import Client

from pippa_memory.models import OutboxEvent, PinRecord
from reference_engine.server import ReferenceEngine
from webui.models import ScheduledJob, Soul, UnattendedRun, Vessel
from webui.unattended.runner import run_due_jobs, run_job, run_wake

pytestmark = pytest.mark.django_db


def test_a_job_carries_the_bundle_at_its_pinned_revision(
    memory_on: ReferenceEngine, job: ScheduledJob, sent_requests: list[Any]
) -> None:
    revision = memory_on.state.remember("pippa", "Bins go out on Tuesday.")

    (run,) = run_due_jobs()

    assert run.outcome == "succeeded"
    assert run.memory["source"] == "bundle"
    assert run.memory["revision"] == revision
    assert len(run.memory["sha256"]) == 64
    (bundle_call,) = [r for r in memory_on.received if r["path"] == "/v1/bundles"]
    assert bundle_call["body"] == {
        "soul": "pippa",
        "job": {"id": str(job.pk), "name": "Morning note"},
        "revision": revision,
    }
    assert "Bins go out on Tuesday." in sent_requests[0]["system"]
    assert f'revision="{revision}"' in sent_requests[0]["system"]
    run.conversation.refresh_from_db()
    assert run.conversation.pinned_head == revision
    assert PinRecord.objects.get(conversation=run.conversation).outcome == "pinned"


def test_the_same_job_and_revision_give_the_same_bundle_bytes(
    memory_on: ReferenceEngine, job: ScheduledJob, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Bins go out on Tuesday.")

    first = run_job(job)
    second = run_job(job)

    assert first.memory["revision"] == second.memory["revision"]
    assert first.memory["sha256"] == second.memory["sha256"]
    assert sent_requests[0]["system"] == sent_requests[1]["system"]


def test_a_wake_carries_the_brief_the_engine_curated(
    memory_on: ReferenceEngine, soul: Soul, offline_vessel: Vessel, sent_requests: list[Any]
) -> None:
    memory_on.state.remember("pippa", "Ada's birthday is on Thursday.")

    run = run_wake(soul=soul)

    assert run.memory["source"] == "brief"
    (brief_call,) = [r for r in memory_on.received if r["path"] == "/v1/wakes/brief"]
    assert brief_call["body"] == {
        "soul": "pippa",
        "wake": {"kind": "soul_stream", "id": str(run.pk)},
    }
    assert "Ada's birthday is on Thursday." in sent_requests[0]["system"]


@pytest.mark.parametrize(
    ("mode", "reason"), [("down", "connection_failed"), ("error", "http_error")]
)
def test_with_the_engine_down_a_job_and_a_wake_still_run_and_say_why(
    memory_on: ReferenceEngine,
    job: ScheduledJob,
    soul: Soul,
    sent_requests: list[Any],
    mode: str,
    reason: str,
) -> None:
    memory_on.set_fault(mode)

    job_run = run_job(job)
    wake_run = run_wake(soul=soul)

    for run in (job_run, wake_run):
        assert run.outcome == "succeeded"
        assert run.memory == {"source": "none", "reason": reason}
        assert run.conversation.messages.filter(role="assistant").exists()
    assert all("<memory" not in request["system"] for request in sent_requests)


def test_with_memory_off_no_engine_call_is_made(
    memory_on: ReferenceEngine, configure: Any, job: ScheduledJob, soul: Soul
) -> None:
    configure(ENABLED=False)

    job_run = run_job(job)
    wake_run = run_wake(soul=soul)

    assert memory_on.received == []
    assert job_run.memory == wake_run.memory == {"source": "none", "reason": "memory_disabled"}


def test_job_and_wake_rows_emit_the_turn_event(
    memory_on: ReferenceEngine, job: ScheduledJob, soul: Soul
) -> None:
    run_job(job)
    run_wake(soul=soul)

    kinds = sorted(e.payload["conversation"]["kind"] for e in OutboxEvent.objects.all())
    assert kinds == ["job", "wake"]
    assert all(e.payload["conversation"]["viewer"] is None for e in OutboxEvent.objects.all())


def test_the_stream_page_says_memory_was_there_and_the_admin_shows_the_bundle_or_brief(
    memory_on: ReferenceEngine, job: ScheduledJob, soul: Soul, make_user: Any
) -> None:
    memory_on.state.remember("pippa", "Something to remember.")
    job_run = run_job(job)
    run_wake(soul=soul)
    staff = Client()
    staff.force_login(make_user("root", is_staff=True, is_superuser=True))

    stream = staff.get("/stream/").content.decode()
    admin = staff.get("/admin/webui/unattendedrun/").content.decode()

    bundle = f"with bundle {job_run.memory['revision']} (sha256 {job_run.memory['sha256'][:12]})"
    assert bundle in admin
    assert "with brief r1" in admin
    assert stream.count("Pippa had the household&#x27;s memories in mind.") == 2
    for record in ("bundle", "brief r1", "sha256", job_run.memory["sha256"][:12]):
        assert record not in stream
    assert UnattendedRun.objects.count() == 2


def test_an_unattended_pin_that_finds_its_conversation_pinned_writes_no_record(
    memory_on: ReferenceEngine, soul: Soul, offline_vessel: Vessel
) -> None:
    from pippa_memory.unattended import prepare_unattended
    from webui.models import Conversation

    conversation = Conversation.objects.create(
        soul=soul, vessel=offline_vessel, viewer=None, kind="wake", title="wake"
    )
    run = UnattendedRun.objects.create(kind="wake", soul=soul, conversation=conversation)
    memory_on.set_fault("down")
    prepare_unattended(conversation, run)
    memory_on.reset()

    prepare_unattended(conversation, run)  # as a second preparer, late: the first one pinned

    conversation.refresh_from_db()
    assert conversation.pinned_head is None
    records = PinRecord.objects.filter(conversation=conversation)
    assert [(r.outcome, r.reason) for r in records] == [("absent", "connection_failed")]
