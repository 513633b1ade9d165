"""Memory has an owner, over real sockets against the reference engine, with two members and an
unattended run: a private memory never reaches another member by any path (block, recall, ask,
brief, bundle, log); a household one reaches everyone; every call to the engine names its viewer.
"""

import logging
from typing import Any

import pytest

from pippa_memory.models import MemberPreference, MemoryBlock, PinRecord
from pippa_memory.pins.turn_block import RENDERED
from reference_engine.server import ReferenceEngine
from tests.support.outbox_delivery import deliver_all
from tests.support.scheduled_jobs import hourly_job
from webui.models import Conversation, ScheduledJob, Soul, Vessel
from webui.turns.service import run_turn
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

SECRET = "Alice's diary code is heron-5150."
SHARED = "The spare key is under the blue pot."


def said(conversation: Conversation, text: str) -> Any:
    """One turn; its turn event delivered."""
    result = run_turn(conversation=conversation, text=text)
    deliver_all()
    return result


@pytest.fixture
def job(soul: Soul, offline_vessel: Vessel) -> ScheduledJob:
    """The morning note, due in an hour (runs here are started by hand)."""
    return hourly_job(soul, offline_vessel, due=False)


@pytest.fixture
def remembered(memory_on: ReferenceEngine, make_conversation: Any) -> ReferenceEngine:
    """Alice said one private thing (her default) and one thing for everyone."""
    alices = make_conversation()
    said(alices, f"remember {SECRET}")
    said(alices, f"remember for everyone {SHARED}")
    return memory_on


def test_a_private_memory_stays_out_of_another_members_block_recall_and_ask(
    remembered: ReferenceEngine,
    make_conversation: Any,
    bob: Any,
    sent_requests: list[Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    bobs = make_conversation(viewer=bob)
    caplog.set_level(logging.DEBUG)

    recall = said(bobs, "recall diary code").assistant_message.tool_uses[0]["output"]
    said(bobs, "ask what is the diary code")
    said(bobs, "and now?")  # the ask's answer rides this turn

    assert SHARED in sent_requests[0]["system"]
    assert recall["match"] == "fallback"  # nothing Bob may see matches
    assert [item["text"] for item in recall["items"]] == [SHARED]
    assert "heron-5150" not in str(sent_requests)
    assert "heron-5150" not in str(Conversation.objects.get(pk=bobs.pk).messages.values())
    assert "heron-5150" not in caplog.text
    assert "heron-5150" not in str(MemoryBlock.objects.filter(viewer=str(bob.pk)).values())


def test_the_member_who_said_it_sees_it_in_a_later_conversation_with_who_said_it(
    remembered: ReferenceEngine, make_conversation: Any, user: Any, sent_requests: list[Any]
) -> None:
    later = make_conversation()

    recall = said(later, "recall diary code").assistant_message.tool_uses[0]["output"]

    assert SECRET in sent_requests[0]["system"]
    assert SHARED in sent_requests[0]["system"]
    assert recall["match"] == "words"  # the code shares "diary code" with it
    assert recall["items"] == [
        {
            "text": SECRET,
            "at": recall["items"][0]["at"],
            "scope": "private",
            "said_by": "Alice",
            "matched_by": "words",
        }
    ]


def test_jobs_and_wakes_carry_household_memories_only(
    remembered: ReferenceEngine, job: ScheduledJob, soul: Soul, sent_requests: list[Any]
) -> None:
    job_run, wake_run = run_job(job), run_wake(soul=soul)

    assert (job_run.memory["source"], wake_run.memory["source"]) == ("bundle", "brief")
    for request in sent_requests:
        assert SHARED in request["system"]
        assert "heron-5150" not in str(request)
    heads = [r for r in remembered.received if r["path"].endswith("/head")]
    assert heads[-1]["query"] == ""  # the job's head: no viewer, household only


def test_what_an_unattended_run_remembers_is_the_households(
    memory_on: ReferenceEngine,
    soul: Soul,
    offline_vessel: Vessel,
    make_conversation: Any,
    bob: Any,
    sent_requests: list[Any],
) -> None:
    job = hourly_job(
        soul,
        offline_vessel,
        due=False,
        name="Boiler",
        prompt="remember The boiler was serviced in March.",
    )

    run = run_job(job)
    deliver_all()
    said(make_conversation(), "hello")
    said(make_conversation(viewer=bob), "hello")

    use = run.conversation.messages.get(role="assistant").tool_uses[0]
    assert use["output"]["scope"] == "household"
    assert all("The boiler was serviced in March." in r["system"] for r in sent_requests[-2:])
    (item,) = [m.item() for m in memory_on.state.souls["pippa"].memories]
    assert (item["scope"], item["said_by"]) == ("household", None)


def test_every_call_to_the_engine_names_its_viewer(
    remembered: ReferenceEngine, make_conversation: Any, user: Any, bob: Any
) -> None:
    bobs = make_conversation(viewer=bob)
    said(bobs, "recall tea")
    said(bobs, "ask about tea")

    calls = remembered.received
    heads = [r["query"] for r in calls if r["path"].endswith("/head")]
    assert heads == [f"viewer={user.pk}", f"viewer={bob.pk}"]
    bodies = [r["body"] for r in calls if r["path"] in ("/v1/recall", "/v1/asks")]
    assert [b["viewer"] for b in bodies] == [str(bob.pk), str(bob.pk)]
    events = [r["body"]["conversation"]["viewer"] for r in calls if r["path"] == "/v1/events"]
    assert events[0] == {"member": str(user.pk), "name": "Alice"}
    assert events[-1] == {"member": str(bob.pk), "name": "Bob"}


def test_two_members_at_one_revision_each_get_their_own_block(
    remembered: ReferenceEngine,
    make_conversation: Any,
    user: Any,
    bob: Any,
    sent_requests: list[Any],
) -> None:
    # Both pin the same revision in one process: neither the table nor the rendered-block cache
    # may hand one member's block to the other.
    run_turn(conversation=make_conversation(), text="hello")
    run_turn(conversation=make_conversation(viewer=bob), text="hello")
    RENDERED.clear()
    run_turn(conversation=make_conversation(viewer=bob), text="hello")
    run_turn(conversation=make_conversation(), text="hello")

    alice_1, bob_1, bob_2, alice_2 = (r["system"] for r in sent_requests)
    assert SECRET in alice_1
    assert alice_1 == alice_2
    assert "heron-5150" not in bob_1
    assert bob_1 == bob_2
    head = remembered.state.souls["pippa"].head
    blocks = MemoryBlock.objects.filter(revision=head)
    assert {b.viewer: len(b.items) for b in blocks} == {str(user.pk): 2, str(bob.pk): 1}


def test_a_members_default_scope_decides_when_the_model_names_none(
    memory_on: ReferenceEngine, make_conversation: Any, bob: Any, sent_requests: list[Any]
) -> None:
    MemberPreference.objects.create(user=bob, default_scope="household")

    output = said(make_conversation(viewer=bob), "remember Bob repainted the hall.")
    said(make_conversation(), "hello")

    assert output.assistant_message.tool_uses[0]["output"]["scope"] == "household"
    assert "Bob repainted the hall." in sent_requests[-1]["system"]


def test_a_conversation_begun_before_scopes_keeps_its_tool_and_remembers_privately(
    memory_on: ReferenceEngine, make_conversation: Any, bob: Any, sent_requests: list[Any]
) -> None:
    old_tool = {
        "name": "memory",
        "description": "Your long-term memory across conversations.",
        "input_schema": {
            "type": "object",
            "properties": {"verb": {"type": "string"}, "text": {"type": "string"}},
            "required": ["verb", "text"],
            "additionalProperties": False,
        },
    }
    old = make_conversation(offered_tools=[old_tool])

    result = said(old, "remember for everyone Alice hides chocolate.")
    said(make_conversation(viewer=bob), "hello")

    use = result.assistant_message.tool_uses[0]
    assert use["input"] == {"verb": "remember", "text": "for everyone Alice hides chocolate."}
    assert use["output"]["scope"] == "private"
    assert sent_requests[0]["tools"] == [old_tool]
    assert "chocolate" not in sent_requests[-1]["system"]


def test_a_pinned_block_gone_at_the_engine_is_repinned_without_the_forgotten_item(
    remembered: ReferenceEngine, make_conversation: Any, sent_requests: list[Any]
) -> None:
    conversation = make_conversation()
    run_turn(conversation=conversation, text="hello")
    state = remembered.state.souls["pippa"]
    (secret,) = [m for m in state.memories if m.text == SECRET]
    remembered.state.forget("pippa", secret.id, viewer=secret.owner)
    MemoryBlock.objects.all().delete()  # as in a process that never stored it
    RENDERED.clear()

    run_turn(conversation=conversation, text="again")

    assert SECRET in sent_requests[0]["system"]
    assert "heron-5150" not in sent_requests[-1]["system"]
    assert SHARED in sent_requests[-1]["system"]
    conversation.refresh_from_db()
    assert conversation.pinned_head == state.head
    reasons = PinRecord.objects.filter(conversation=conversation).order_by("created_at", "id")
    assert [r.reason for r in reasons] == ["", "forgotten"]


def test_a_head_rendered_for_another_viewer_is_never_pinned(
    remembered: ReferenceEngine,
    make_conversation: Any,
    bob: Any,
    user: Any,
    monkeypatch: pytest.MonkeyPatch,
    sent_requests: list[Any],
) -> None:
    # An engine that ignores the viewer and answers with Alice's block.
    block = remembered.state.block
    monkeypatch.setattr(
        remembered.state,
        "block",
        lambda soul, revision=None, *, viewer=None: block(soul, revision, viewer=str(user.pk)),
    )
    bobs = make_conversation(viewer=bob)

    run_turn(conversation=bobs, text="hello")

    assert "heron-5150" not in sent_requests[0]["system"]
    assert PinRecord.objects.get(conversation=bobs).reason == "wrong_viewer"


def test_a_recall_holding_another_members_private_item_is_cut_to_what_the_viewer_may_see(
    remembered: ReferenceEngine,
    make_conversation: Any,
    bob: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An engine that ignores the viewer and recalls every item.
    (private,) = [m for m in remembered.state.souls["pippa"].memories if m.scope == "private"]
    recall = remembered.state.recall

    def recall_for_the_owner(soul: str, query: str, limit: int, **_: Any) -> Any:
        return recall(soul, query, limit, viewer=private.owner)

    monkeypatch.setattr(remembered.state, "recall", recall_for_the_owner)
    bobs = make_conversation(viewer=bob)

    output = said(bobs, "recall diary code").assistant_message.tool_uses[0]["output"]

    assert output["items"] == []
    assert "heron-5150" not in str(output)
    assert "held 1 item(s) its viewer may not see" in caplog.text
    assert "heron-5150" not in caplog.text
