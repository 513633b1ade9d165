"""Models a family can choose (issue 38): the household's default model is an admin's explicit
choice (a vessel never becomes it by being added), a model is ready only once its last test or
call answered, and a member moves their chat to another switched-on model: the next turn answers
there, and the cache ledger names the move a deliberate cause (``moved_by_member``)."""

import importlib
from io import StringIO
from typing import Any

import pytest
import responses
from django.apps import apps
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.test import Client

from provider_doubles import AnthropicKit
from tests.support import vessels
from webui.models import Conversation, MemberSettings, Vessel, VesselCall, VesselMove
from webui.turns.lock import claim_turn, release_turn
from webui.turns.service import run_turn
from webui.web.conversations import ConversationError, move_conversation

pytestmark = pytest.mark.django_db

FORM_FIELDS = vessels.admin_form(adapter="offline", model="offline-2")


def offline(slug: str, name: str, **fields: Any) -> Vessel:
    return Vessel.objects.create(
        slug=slug, name=name, adapter=Vessel.Adapter.OFFLINE, model=f"{slug}-1", **fields
    )


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def new_chat_choice(client: Client) -> str:
    """The model the new-conversation form has chosen: its selected option's value."""
    form = client.get("/conversations/new/").context["form"]
    chosen = form["vessel"].value()
    return "" if chosen is None else str(getattr(chosen, "pk", chosen))


@pytest.fixture
def admin_client(make_user: Any) -> Client:
    return signed_in(make_user("root", is_staff=True, is_superuser=True))


def test_a_vessel_added_in_the_admin_never_becomes_the_default(
    admin_client: Client, user: Any, soul: Any, offline_vessel: Vessel
) -> None:
    member = signed_in(user)
    assert new_chat_choice(member) == "", "no default until an admin chooses one"
    page = member.get("/conversations/new/").content.decode()
    assert '<option value="" selected>Choose a model</option>' in page
    refused = member.post("/conversations/new/", {"soul": soul.pk, "vessel": ""})
    assert "Choose a model to talk through." in refused.content.decode()
    assert not Conversation.objects.exists()

    Vessel.objects.filter(pk=offline_vessel.pk).update(household_default=True)
    assert new_chat_choice(member) == str(offline_vessel.pk)
    added = admin_client.post(
        "/admin/webui/vessel/add/", {"slug": "aardvark", "name": "Aardvark", **FORM_FIELDS}
    )
    assert added.status_code == 302, added.content.decode()[:2000]

    assert new_chat_choice(member) == str(offline_vessel.pk), "the new one took nothing"
    assert Vessel.objects.get(slug="aardvark").household_default is False


def test_ticking_household_default_in_the_admin_takes_it_from_the_one_that_had_it(
    admin_client: Client, offline_vessel: Vessel
) -> None:
    Vessel.objects.filter(pk=offline_vessel.pk).update(household_default=True)
    other = offline("other", "Other")

    response = admin_client.post(
        f"/admin/webui/vessel/{other.pk}/change/",
        {"slug": "other", "name": "Other", "household_default": "on", **FORM_FIELDS},
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    defaults = list(Vessel.objects.filter(household_default=True).values_list("slug", flat=True))
    assert defaults == ["other"]


def test_the_database_keeps_at_most_one_household_default(offline_vessel: Vessel) -> None:
    Vessel.objects.filter(pk=offline_vessel.pk).update(household_default=True)

    with pytest.raises(IntegrityError), transaction.atomic():
        offline("second", "Second", household_default=True)


def test_a_members_own_default_comes_first_while_it_is_switched_on(
    user: Any, offline_vessel: Vessel
) -> None:
    Vessel.objects.filter(pk=offline_vessel.pk).update(household_default=True)
    mine = offline("mine", "Mine")
    MemberSettings.objects.create(user=user, default_vessel=mine)
    member = signed_in(user)
    assert new_chat_choice(member) == str(mine.pk)

    Vessel.objects.filter(pk=mine.pk).update(enabled=False)

    assert new_chat_choice(member) == str(offline_vessel.pk)


def models_page_row(client: Client, vessel: Vessel) -> str:
    page = client.get("/vessels/").content.decode()
    start = page.index(f'id="vessel-{vessel.slug}"')
    return page[start : page.index("</tr>", start)]


@responses.activate
def test_a_model_is_ready_only_once_its_last_test_or_call_answered(
    user: Any, admin_client: Client, conversation: Conversation, monkeypatch: Any
) -> None:
    member = signed_in(user)
    vessel = conversation.vessel
    assert "Not tried yet" in models_page_row(member, vessel)

    run_turn(conversation=conversation, text="hello")

    assert 'class="usable">Ready' in models_page_row(member, vessel)

    claude = vessels.claude(monkeypatch, "sk-ant-test-0123456789", max_retries=0)
    kit = AnthropicKit()
    kit.queue(responses, 200, kit.text_body("ok"))
    admin_client.post("/vessels/claude/test/")
    assert 'class="usable">Ready' in models_page_row(member, claude)

    status, body, _ = kit.error("auth_failed")
    kit.queue(responses, status, body)
    admin_client.post("/vessels/claude/test/")

    row = models_page_row(member, claude)
    assert "Not answering: its last call failed" in row
    assert "401" not in row, "the provider's detail is for the admin"
    assert "401" in models_page_row(admin_client, claude)


def test_a_member_moves_a_chat_and_its_next_turn_answers_on_the_new_model(
    user: Any, conversation: Conversation
) -> None:
    run_turn(conversation=conversation, text="hello")
    other = offline("other", "Other")

    response = signed_in(user).post(
        f"/conversations/{conversation.pk}/model/", {"vessel": other.pk}, follow=True
    )

    assert "This chat is now on Other" in response.content.decode()
    moved = Conversation.objects.get(pk=conversation.pk)
    assert moved.vessel == other
    assert VesselMove.objects.filter(
        conversation=moved, from_vessel=conversation.vessel, to_vessel=other, moved_by=user
    ).exists()
    result = run_turn(conversation=moved, text="and now?")

    assert result.assistant_message.vessel == other
    call = VesselCall.objects.filter(conversation=moved).order_by("-id").first()
    assert (call.vessel, call.drift_section, call.drift_cause) == (
        other,
        "vessel",
        "moved_by_member",
    ), "a deliberate cause, not unexplained drift"


def test_a_vessel_changed_without_a_members_move_is_named_so_in_the_ledger(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")
    other = offline("other", "Other")
    Conversation.objects.filter(pk=conversation.pk).update(vessel=other)

    run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="and now?")

    call = VesselCall.objects.filter(conversation=conversation).order_by("-id").first()
    assert call.drift_cause == "vessel_changed"


@pytest.mark.parametrize("why", ["switched_off", "same", "turn_running"])
def test_a_move_that_cannot_be_made_is_refused_and_changes_nothing(
    user: Any, conversation: Conversation, why: str
) -> None:
    other = offline("other", "Other", enabled=why != "switched_off")
    target = conversation.vessel if why == "same" else other
    lock = claim_turn(conversation) if why == "turn_running" else None

    with pytest.raises(ConversationError) as refused:
        move_conversation(conversation=conversation, vessel=target, moved_by=user)

    if lock is not None:
        release_turn(lock)
    expected = {
        "switched_off": "vessel_switched_off",
        "same": "same_vessel",
        "turn_running": "turn_in_progress",
    }
    assert refused.value.code == expected[why]
    assert Conversation.objects.get(pk=conversation.pk).vessel_id == conversation.vessel_id
    assert not VesselMove.objects.exists()


def test_the_move_form_refuses_a_switched_off_model_in_words(
    user: Any, conversation: Conversation
) -> None:
    other = offline("other", "Other", enabled=False)

    response = signed_in(user).post(
        f"/conversations/{conversation.pk}/model/", {"vessel": other.pk}, follow=True
    )

    assert "Not moved: That model is switched off or gone; choose another." in (
        response.content.decode()
    )
    assert Conversation.objects.get(pk=conversation.pk).vessel_id == conversation.vessel_id


def test_another_members_chat_cannot_be_moved(make_user: Any, conversation: Conversation) -> None:
    other = offline("other", "Other")

    response = signed_in(make_user("bob")).post(
        f"/conversations/{conversation.pk}/model/", {"vessel": other.pk}
    )

    assert response.status_code == 404
    assert not VesselMove.objects.exists()


def test_the_upgrade_counts_a_vessel_that_answered_before_as_ready(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")
    untried = offline("untried", "Untried")
    Vessel.objects.update(last_outcome="", last_outcome_at=None)
    migration = importlib.import_module("webui.migrations.0015_members_choose_their_models")

    migration.answered_where_a_call_was_kept(apps, None)

    assert Vessel.objects.get(pk=conversation.vessel_id).last_outcome == "answered"
    assert Vessel.objects.get(pk=untried.pk).last_outcome == ""


def test_the_demo_chooses_its_default_model_once_and_keeps_an_admins_choice() -> None:
    call_command("load_demo", password="pw-for-the-test", stdout=StringIO())
    assert list(Vessel.objects.filter(household_default=True).values_list("slug", flat=True)) == [
        "offline"
    ]
    Vessel.objects.update(household_default=False)
    chosen = offline("chosen", "Chosen", household_default=True)

    call_command("load_demo", password="pw-for-the-test", stdout=StringIO())

    assert list(Vessel.objects.filter(household_default=True)) == [chosen]
