"""A forget or make-private whose answer never came (the engine's ``reset`` fault: it applied the
change and the answer was lost) is treated as done everywhere a copy could carry the item: no
later wake brief (the Soul Stream's post included), job bundle or stored unattended memory holds
it, and after a make-private no other member's memory page shows it while the page says plainly,
to the member who made it, that the engine did not confirm it. The prompt, recall and API listing
are held in ``test_forget_unconfirmed.py``, and a brief or bundle the engine still builds from the
item (a 5xx before it applied the change) by the brief and bundle item-id checks there. Against
the reference engine over a socket."""

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from pippa_memory.models import UnattendedMemory
from reference_engine.server import ReferenceEngine
from tests.pippa_memory.items.test_memory_items_api import api_as
from tests.pippa_memory.pins.test_forget_unconfirmed import SECRET, lose_the_answer
from tests.support.household_memory import add_memory
from webui.models import Message, ScheduledJob, Soul, Vessel
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

#: The engine applies the change, then resets the connection: the answer never arrives.
LOST_AFTER_APPLYING = "lost_after_applying"


@pytest.fixture
def bob(make_user: Any) -> Any:
    return make_user("bob")


def unattended_copies(soul: Soul, vessel: Vessel, sent: list[dict[str, Any]]) -> str:
    """Everything a wake and a job run now carry: what the vessel was handed, the Soul Stream's
    post, and the brief and bundle stored for them."""
    before = len(sent)
    job = ScheduledJob.objects.create(
        name="Morning note", soul=soul, vessel=vessel, prompt="Write the note.",
        schedule="every 1h", next_run_at=timezone.now() - timedelta(seconds=1),
    )  # fmt: skip
    runs = [run_wake(soul=soul, vessel=vessel), run_job(job)]
    conversations = [run.conversation for run in runs]
    posts = Message.objects.filter(conversation__in=conversations).values_list("content")
    stored = UnattendedMemory.objects.filter(conversation__in=conversations).values_list("text")
    return json.dumps([sent[before:], list(posts), list(stored)])


def memory_page(user: Any) -> str:
    page = Client()
    page.force_login(user)
    return page.get("/memory/", {"soul": "pippa"}).content.decode()


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
    assert SECRET in memory_page(bob)
    assert SECRET in unattended_copies(soul, offline_vessel, sent_requests)
    lose_the_answer(memory_on, LOST_AFTER_APPLYING, f"/v1/souls/pippa/items/{item}")
    page = Client()
    page.force_login(user)

    said = page.post(
        f"/memory/items/{item}/scope/?soul=pippa", {"scope": "private", "soul": "pippa"},
        follow=True,
    ).content.decode()  # fmt: skip

    assert "The memory engine did not confirm this" in said
    assert "For privacy it was treated as done" in said
    assert SECRET in memory_page(user)  # still the sayer's own
    assert SECRET not in memory_page(bob)
    assert SECRET not in unattended_copies(soul, offline_vessel, sent_requests)
