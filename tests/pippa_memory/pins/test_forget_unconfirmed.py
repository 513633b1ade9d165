"""Unknown is not "no": a forget, make-private or forget-member whose answer the engine never gave
(its connection reset after the change took effect, or a 5xx before it did) is treated as done
for privacy. No later prompt, recall, page, wake brief or job bundle holds the item (a brief or
bundle that does is not used: the run goes without it and records why); the page and the API say
plainly that the engine did not confirm it; asking again is a success. Management calls have their
own budget, not the chat turn's. Against the reference engine over a socket."""

import hashlib
import json
from typing import Any

import pytest

from pippa_memory.models import ItemTombstone, MemoryBlock, UnattendedMemory
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as, page_as
from tests.support.household_memory import add_memory, grant_manage_memory, head
from tests.support.lost_answers import (
    CHANGES,
    LOST,
    SECRET,
    api_listing,
    assert_nowhere_for,
    lose_the_answer,
    said_then_forgotten,
)
from tests.support.memory_turns import next_prompt, started
from tests.support.scheduled_jobs import hourly_job
from webui.models import ScheduledJob, UnattendedRun
from webui.unattended.display import describe_memory
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db


def morning_note(soul: Any, vessel: Any) -> ScheduledJob:
    """A scheduled job of ``soul``, due now."""
    return hourly_job(soul, vessel, prompt="Write the note.")


@pytest.fixture
def answer_to_be_lost(memory_on: ReferenceEngine, user: Any, soul: Any) -> str:
    """Alice's SECRET; the engine will apply the next change to it and lose the answer."""
    item = add_memory(memory_on, SECRET, by=user)
    lose_the_answer(memory_on, "lost_after_applying", f"/v1/souls/pippa/items/{item}")
    return item


@pytest.mark.parametrize("case", LOST)
def test_a_forget_whose_answer_is_lost_leaves_no_prompt_recall_or_page_holding_the_item(
    memory_on: ReferenceEngine, user: Any, make_conversation: Any, sent_requests: list[Any],
    case: str,
) -> None:  # fmt: skip
    item = add_memory(memory_on, SECRET, by=user)
    holds = started(make_conversation(viewer=user))
    assert SECRET in sent_requests[-1]["system"]
    lose_the_answer(memory_on, case, f"/v1/souls/pippa/items/{item}")

    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")

    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["confirmed"], body["repinned"], body["revision"]) == (False, 1, None)
    assert "did not confirm" in body["message"]
    assert "treated as done" in body["message"]
    assert_nowhere_for(user, SECRET, holds, sent_requests, make_conversation)
    assert all(item not in block.items for block in MemoryBlock.objects.all())


def test_forgetting_again_after_a_lost_answer_is_a_success(
    memory_on: ReferenceEngine, user: Any, answer_to_be_lost: str
) -> None:
    item = answer_to_be_lost
    client = api_as(user)
    assert client.delete(f"/api/memory/items/{item}/?soul=pippa").status_code == 202

    again = client.delete(f"/api/memory/items/{item}/?soul=pippa")

    assert again.status_code == 200, again.content
    assert again.json()["confirmed"] is True
    assert item not in head(memory_on, viewer=user)["items"]


def test_the_page_says_the_engine_did_not_confirm_and_that_it_was_treated_as_done(
    user: Any, answer_to_be_lost: str
) -> None:
    item = answer_to_be_lost
    page = page_as(user)

    response = page.post(f"/memory/items/{item}/forget/", {"soul": "pippa"}, follow=True)

    html = response.content.decode()
    assert "The memory engine did not confirm this (connection_failed)" in html
    assert "For privacy it was treated as done" in html
    assert "Nothing was forgotten" not in html
    assert SECRET not in html


@pytest.mark.parametrize("case", LOST)
def test_a_make_private_whose_answer_is_lost_leaves_no_other_members_prompt_or_page_holding_it(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any,
    sent_requests: list[Any], case: str,
) -> None:  # fmt: skip
    item = add_memory(memory_on, SECRET, by=user)
    bobs = started(make_conversation(viewer=bob))
    assert SECRET in sent_requests[-1]["system"]
    lose_the_answer(memory_on, case, f"/v1/souls/pippa/items/{item}")

    response = api_as(user).patch(
        f"/api/memory/items/{item}/?soul=pippa", {"scope": "private"}, format="json"
    )

    assert response.status_code == 202, response.content
    assert response.json()["confirmed"] is False
    assert response.json()["item"]["scope"] == "private"
    assert SECRET not in next_prompt(bobs, sent_requests, "again")
    assert SECRET not in next_prompt(bobs, sent_requests, "recall blue pot")
    assert SECRET not in next_prompt(make_conversation(viewer=bob), sent_requests, "hi")
    assert SECRET not in api_listing(bob)
    assert SECRET in api_listing(user)  # still the sayer's own
    assert list(ItemTombstone.objects.values_list("item_id", "spared_viewer")) == [
        (item, str(user.pk))
    ]


@pytest.mark.parametrize("case", LOST)
def test_a_forget_member_whose_answer_is_lost_leaves_no_prompt_or_page_holding_their_items(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_user: Any, make_conversation: Any,
    sent_requests: list[Any], case: str,
) -> None:  # fmt: skip
    add_memory(memory_on, SECRET, by=bob)
    add_memory(memory_on, "Bob's own secret plan.", scope="private", by=bob)
    alices = started(make_conversation(viewer=user))
    assert SECRET in sent_requests[-1]["system"]
    manager = grant_manage_memory(make_user("carol", is_staff=True))
    lose_the_answer(memory_on, case, f"/v1/souls/pippa/members/{bob.pk}/forget")

    response = api_as(manager).post(f"/api/memory/members/{bob.pk}/forget/?soul=pippa")

    assert response.status_code == 202, response.content
    assert (response.json()["confirmed"], response.json()["forgotten"]) == (False, 2)
    assert SECRET not in next_prompt(alices, sent_requests, "again")
    assert SECRET not in next_prompt(alices, sent_requests, "recall blue pot")
    assert SECRET not in api_listing(user)
    assert "secret plan" not in api_listing(bob)
    before = len(sent_requests)
    wake = run_wake(soul=alices.soul)
    job = run_job(morning_note(alices.soul, alices.vessel))
    assert (wake.outcome, job.outcome) == (UnattendedRun.Outcome.SUCCEEDED,) * 2
    assert SECRET not in json.dumps(sent_requests[before:])
    assert SECRET not in json.dumps(list(UnattendedMemory.objects.values_list("text")))


def test_a_job_whose_head_holds_an_item_forgotten_here_goes_without_its_bundle(
    memory_on: ReferenceEngine, user: Any, soul: Any, offline_vessel: Any,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    said_then_forgotten(memory_on, user, "failed_before")

    run = run_job(morning_note(soul, offline_vessel))

    assert run.memory == {"source": "none", "reason": "stale_block"}
    assert SECRET not in json.dumps(sent_requests)


def test_a_wake_whose_brief_holds_an_item_forgotten_here_goes_without_it_and_says_why(
    memory_on: ReferenceEngine, user: Any, soul: Any, offline_vessel: Any,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    said_then_forgotten(memory_on, user, "failed_before")

    run = run_wake(soul=soul)

    assert run.outcome == UnattendedRun.Outcome.SUCCEEDED
    assert run.memory == {"source": "none", "reason": "stale_block"}
    assert describe_memory(run.memory) == "without memory: stale_block"
    assert not UnattendedMemory.objects.exists()
    assert SECRET not in json.dumps(sent_requests)


def test_a_job_whose_bundle_holds_an_item_forgotten_here_goes_without_it_and_says_why(
    memory_on: ReferenceEngine, user: Any, soul: Any, offline_vessel: Any,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    item = said_then_forgotten(memory_on, user, "lost_after_applying")
    revision = head(memory_on)["revision"]  # the head no longer holds it; a lagging bundle does
    text = f"Job Morning note at {revision}.\n- {SECRET}"
    stale = {
        "bundle": text, "revision": revision, "items": [item], "viewer": None,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }  # fmt: skip
    memory_on.set_fault("wrong_shape", paths=["/v1/bundles"], body=stale)

    run = run_job(morning_note(soul, offline_vessel))

    assert run.outcome == UnattendedRun.Outcome.SUCCEEDED
    assert run.memory == {"source": "none", "reason": "stale_block"}
    assert not UnattendedMemory.objects.exists()
    assert SECRET not in json.dumps(sent_requests)


def test_a_management_call_has_its_own_budget_not_the_chat_turns(
    memory_on: ReferenceEngine, user: Any, soul: Any, configure: Any
) -> None:
    configure(CHAT_BUDGET=0.5, READ_TIMEOUT=0.5, MANAGE_BUDGET=5.0)
    item = add_memory(memory_on, SECRET, by=user)
    memory_on.set_fault(
        "latency", seconds=1.2, paths=[f"/v1/souls/pippa/items/{item}"], methods=CHANGES
    )

    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")

    assert response.status_code == 200, response.content
    assert response.json()["confirmed"] is True
    assert item not in head(memory_on, viewer=user)["items"]
