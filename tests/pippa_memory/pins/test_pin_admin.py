"""Pin history for admins: every pin and absent pin listed with filters, each conversation's block
readable, and a deliberate re-pin that asks for a reason, records who, and warns of the cost."""

import html
import re
from typing import Any

import pytest
from django.test import Client

from pippa_memory.models import PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.clients import page_as
from tests.support.memory_turns import started
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user: Any) -> Any:
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def staff_client(staff: Any) -> Client:
    return page_as(staff)


@pytest.fixture
def pinned(memory_on: ReferenceEngine, conversation: Conversation) -> Conversation:
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")
    return started(conversation)


def test_the_pin_history_lists_pins_and_absent_pins_with_filters(
    staff_client: Client, pinned: Conversation, make_conversation: Any
) -> None:
    run_turn(conversation=make_conversation(temporary=True), text="hi")

    page = staff_client.get("/admin/pippa_memory/pinrecord/").content.decode()
    assert "Pinned absent" in page
    assert "temporary" in page
    assert pinned.pinned_head in page
    filtered = staff_client.get("/admin/pippa_memory/pinrecord/?outcome__exact=absent")
    assert filtered.status_code == 200
    listed = list(filtered.context["cl"].result_list)
    assert listed, "the absent pin is listed"
    assert all(record.outcome == "absent" for record in listed)
    assert (
        staff_client.get(
            f"/admin/pippa_memory/pinrecord/?soul__id__exact={pinned.soul_id}"
        ).status_code
        == 200
    )
    assert (
        staff_client.get("/admin/pippa_memory/pinrecord/?created_at__year=2026").status_code == 200
    )


def test_a_members_pinned_block_is_named_but_its_text_withheld_from_other_staff(
    staff_client: Client, pinned: Conversation
) -> None:
    # The block was rendered for the member, so it may hold their private memories.
    page = staff_client.get(f"/admin/pippa_memory/conversationpin/{pinned.pk}/change/")

    assert page.status_code == 200
    assert pinned.pinned_head in page.content.decode()
    assert "The spare key is under the blue pot." not in page.content.decode()
    assert "holds their private memories" in page.content.decode()


def test_repin_asks_for_a_reason_warns_of_the_cost_and_records_who(
    staff_client: Client, staff: Any, pinned: Conversation
) -> None:
    url = "/admin/pippa_memory/conversationpin/"
    asked = staff_client.post(
        url, {"action": "repin_at_next_turn", "_selected_action": [pinned.pk]}
    )
    assert asked.status_code == 200
    assert "cache misses" in asked.content.decode()
    assert not PinRecord.objects.filter(outcome="repin_requested").exists()

    no_reason = staff_client.post(
        url,
        {
            "action": "repin_at_next_turn",
            "_selected_action": [pinned.pk],
            "confirm": "yes",
            "reason": "",
        },
    )
    assert "This field is required" in no_reason.content.decode()
    assert not PinRecord.objects.filter(outcome="repin_requested").exists()

    staff_client.post(
        url,
        {
            "action": "repin_at_next_turn",
            "_selected_action": [pinned.pk],
            "confirm": "yes",
            "reason": "The engine was rebuilt.",
        },
    )
    record = PinRecord.objects.get(outcome="repin_requested")
    assert record.requested_by == staff
    assert record.reason == "The engine was rebuilt."
    pinned.refresh_from_db()
    assert pinned.pinned_at is None


def test_pin_history_is_staff_only(pinned: Conversation, user: Any) -> None:
    client = Client()
    client.force_login(user)

    response = client.get("/admin/pippa_memory/pinrecord/")

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_pin_records_cannot_be_added_or_edited(staff_client: Client, pinned: Conversation) -> None:
    record = PinRecord.objects.get()

    assert staff_client.get("/admin/pippa_memory/pinrecord/add/").status_code == 403
    response = staff_client.post(
        f"/admin/pippa_memory/pinrecord/{record.pk}/change/", {"reason": "tampered"}
    )
    assert response.status_code == 403
    record.refresh_from_db()
    assert record.reason == ""


def test_a_pin_cannot_be_changed_in_the_admin_only_re_pinned(
    staff_client: Client, pinned: Conversation
) -> None:
    head, at = pinned.pinned_head, pinned.pinned_at

    page = staff_client.get(f"/admin/pippa_memory/conversationpin/{pinned.pk}/change/")
    forged = staff_client.post(
        f"/admin/pippa_memory/conversationpin/{pinned.pk}/change/",
        {"pinned_head": "r-forged", "viewer": "", "kind": "wake"},
    )

    assert 'name="pinned_head"' not in page.content.decode()
    assert forged.status_code == 403
    assert staff_client.get("/admin/pippa_memory/conversationpin/add/").status_code == 403
    pinned.refresh_from_db()
    assert (pinned.pinned_head, pinned.pinned_at, pinned.kind) == (head, at, "chat")


def test_the_repin_confirmation_shows_where_it_is_in_the_admin(
    staff_client: Client, pinned: Conversation
) -> None:
    asked = staff_client.post(
        "/admin/pippa_memory/conversationpin/",
        {"action": "repin_at_next_turn", "_selected_action": [pinned.pk]},
    )

    page = asked.content.decode()
    crumbs = page[page.index('<div class="breadcrumbs">') :]
    crumbs = crumbs[: crumbs.index("</div>")]
    words = html.unescape(re.sub(r"<[^>]+>", "", crumbs))
    assert [part.strip() for part in words.split("›")] == [
        "Home",
        "Pippa memory",
        "Conversation pins",
        "Re-pin at next turn",
    ]
    assert 'href="/admin/pippa_memory/"' in crumbs
    assert 'href="/admin/pippa_memory/conversationpin/"' in crumbs
    assert page.count("<h1>Re-pin at next turn</h1>") == 1
