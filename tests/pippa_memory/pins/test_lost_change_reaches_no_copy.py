"""A forget or make-private whose answer never came (the engine's ``reset`` fault: it applied the
change and the answer was lost) is treated as done everywhere a copy could carry the item: no
later wake brief (the Soul Stream's post included), job bundle or stored unattended memory holds
it, and after a make-private no other member's memory page shows it while the page says plainly,
to the member who made it, that the engine did not confirm it. The prompt, recall and API listing
are held in ``test_forget_unconfirmed.py``, and a brief or bundle the engine still builds from the
item (a 5xx before it applied the change) by the brief and bundle item-id checks there. Against
the reference engine over a socket."""

import json
from typing import Any

import pytest

from pippa_memory.models import UnattendedMemory
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as, page_as
from tests.support.household_memory import add_memory, memory_page
from tests.support.lost_answers import SECRET, api_listing, lose_the_answer
from tests.support.scheduled_jobs import hourly_job
from webui.models import Message, Soul, Vessel
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

#: The engine applies the change, then resets the connection: the answer never arrives.
LOST_AFTER_APPLYING = "lost_after_applying"


def unattended_copies(soul: Soul, vessel: Vessel, sent: list[dict[str, Any]]) -> str:
    """Everything a wake and a job run now carry: what the vessel was handed, the Soul Stream's
    post, and the brief and bundle stored for them."""
    before = len(sent)
    job = hourly_job(soul, vessel, prompt="Write the note.")
    runs = [run_wake(soul=soul, vessel=vessel), run_job(job)]
    conversations = [run.conversation for run in runs]
    posts = Message.objects.filter(conversation__in=conversations).values_list("content")
    stored = UnattendedMemory.objects.filter(conversation__in=conversations).values_list("text")
    return json.dumps([sent[before:], list(posts), list(stored)])


def test_a_forget_whose_answer_is_lost_leaves_no_brief_bundle_or_stream_post_holding_it(
    memory_on: ReferenceEngine, user: Any, soul: Soul, offline_vessel: Vessel,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    item = add_memory(memory_on, SECRET, by=user)
    assert SECRET in unattended_copies(soul, offline_vessel, sent_requests)
    lose_the_answer(memory_on, LOST_AFTER_APPLYING, f"/v1/souls/pippa/items/{item}")

    response = api_as(user).delete(f"/api/memory/items/{item}/?soul=pippa")

    assert response.status_code == 202, response.content
    assert SECRET not in json.dumps(list(UnattendedMemory.objects.values_list("text")))
    assert SECRET not in unattended_copies(soul, offline_vessel, sent_requests)


def test_a_make_private_whose_answer_is_lost_leaves_no_other_page_brief_or_bundle_holding_it(
    memory_on: ReferenceEngine, user: Any, bob: Any, soul: Soul, offline_vessel: Vessel,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    item = add_memory(memory_on, SECRET, by=user)
    assert SECRET in memory_page(bob, soul="pippa")
    assert SECRET in unattended_copies(soul, offline_vessel, sent_requests)
    lose_the_answer(memory_on, LOST_AFTER_APPLYING, f"/v1/souls/pippa/items/{item}")
    said = page_as(user).post(
        f"/memory/items/{item}/scope/?soul=pippa", {"scope": "private", "soul": "pippa"},
        follow=True,
    ).content.decode()  # fmt: skip

    assert "The memory engine did not confirm this" in said
    assert "For privacy it was treated as done" in said
    assert SECRET in memory_page(user, soul="pippa")  # still the sayer's own
    assert SECRET not in memory_page(bob, soul="pippa")
    assert SECRET not in unattended_copies(soul, offline_vessel, sent_requests)


def test_a_make_private_whose_change_failed_leaves_no_trace_under_what_replaced_it(
    memory_on: ReferenceEngine, user: Any, bob: Any, soul: Soul
) -> None:
    """Bob corrected Alice's household memory; she then makes the old one private and the engine
    fails before applying it. Bob's page, listing and download show his correction, but neither
    the old words it replaced nor a reason quoting them."""
    item = add_memory(memory_on, SECRET, by=user)
    newer = "The spare key is with the neighbour now."
    memory_on.state.correct_item("pippa", item, newer, viewer=str(bob.pk), name="Bob")
    assert SECRET in memory_page(bob, soul="pippa")  # shown as what his correction replaced
    lose_the_answer(memory_on, "failed_before", f"/v1/souls/pippa/items/{item}")

    said = page_as(user).post(
        f"/memory/items/{item}/scope/?soul=pippa", {"scope": "private", "soul": "pippa"},
        follow=True,
    ).content.decode()  # fmt: skip

    assert "The memory engine did not confirm this" in said
    page = memory_page(bob, soul="pippa")
    assert newer in page
    assert SECRET not in page
    assert SECRET not in api_listing(bob)
    again = api_as(bob).post(
        "/api/memory/items/?soul=pippa", {"text": newer, "scope": "household"}, format="json"
    )
    assert again.status_code == 201, again.content  # the same words: the memory he has
    assert SECRET not in again.content.decode()
    for kind in ("json", "markdown"):
        response = api_as(bob).get("/api/memory/export/", {"soul": "pippa", "format": kind})
        download = b"".join(response.streaming_content).decode()
        assert newer in download
        assert SECRET not in download
