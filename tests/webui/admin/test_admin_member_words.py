"""A member's words stay theirs in the admin: staff holding every view permission, and a
superuser, read no member's words on any admin page, in the admin's action log or on ``/cache/``;
a conversation is labelled by soul, vessel and date; no search finds one by its title or a message
by its text; and every lookup on free text from the query string is refused with a plain 400,
NULs and bad patterns included (run on PostgreSQL too: ``DATABASE_URL``)."""

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core import checks
from django.db import connection
from django.test import Client

from tests.support import admin_member_words as admin_walk
from tests.support.access_walk import make_role_users
from tests.support.clients import client_as
from tests.support.member_words import PRIVATE_WORDS, recalled_turn
from webui.models import Conversation, Vessel, VesselCall

pytestmark = pytest.mark.django_db

TITLE = "Surprise party for Bob"


def seed_members_conversation(conversation: Conversation) -> Conversation:
    """A member's turn that recalled a memory, titled by their first words, with its ledger row."""
    conversation.title = TITLE
    conversation.save()
    said, _ = recalled_turn(conversation)
    VesselCall.objects.create(
        conversation=conversation,
        user_message=said,
        round=0,
        vessel=conversation.vessel,
        adapter=conversation.vessel.adapter,
        model=conversation.vessel.model,
        prefix_bytes=100,
    )
    return conversation


@pytest.fixture
def accounts(make_user: Any) -> dict[str, Any]:
    return make_role_users(make_user)


@pytest.fixture
def alices(make_user: Any, make_conversation: Any) -> Conversation:
    return seed_members_conversation(make_conversation(viewer=make_user("alice_member")))


def change_vessel_in_the_admin(client: Client, conversation: Conversation, vessel: Vessel) -> None:
    """A superuser's change, which the admin's action log records with the object's label (the
    title is sent as a form that showed it would send it, so that a title field keeps it)."""
    count = conversation.messages.count()
    form = {
        "title": conversation.title,
        "vessel": vessel.pk,
        "messages-TOTAL_FORMS": str(count),
        "messages-INITIAL_FORMS": str(count),
        "messages-MIN_NUM_FORMS": "0",
        "messages-MAX_NUM_FORMS": "1000",
    }
    form |= {f"messages-{i}-id": str(m.pk) for i, m in enumerate(conversation.messages.all())}
    answer = client.post(f"/admin/webui/conversation/{conversation.pk}/change/", form)
    assert answer.status_code == 302


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_no_admin_page_the_action_log_or_the_cache_page_shows_a_members_words(
    alices: Conversation, accounts: dict[str, Any], make_conversation: Any, role: str
) -> None:
    root = client_as(accounts["superuser"])
    other = Vessel.objects.create(slug="other", name="Other", adapter="offline", model="m-2")
    change_vessel_in_the_admin(root, alices, other)
    # The admin deletes a conversation only while no read-only record (a message) goes with it.
    deleted = make_conversation(viewer=alices.viewer, title="Surprise party, the guest list")
    answer = root.post(f"/admin/webui/conversation/{deleted.pk}/delete/", {"post": "yes"})
    assert answer.status_code == 302
    client = client_as(accounts[role])
    pages = [
        *admin_walk.admin_pages(with_delete=role == "superuser"),
        "/cache/",
        f"/api/ledger/?conversation={alices.pk}",
    ]

    assert admin_walk.pages_quoting(client, pages, PRIVATE_WORDS) == []
    alices.refresh_from_db()
    listed = client.get("/admin/webui/conversation/").content.decode()
    assert str(alices) in listed
    assert str(alices).startswith("Pippa via Other (")


def test_the_member_still_sees_and_renames_their_own_title(alices: Conversation) -> None:
    member = client_as(alices.viewer)

    assert TITLE in member.get("/").content.decode()
    assert TITLE in member.get(f"/conversations/{alices.pk}/").content.decode()
    member.post(f"/conversations/{alices.pk}/rename/", {"title": "Bob's party, shh"})
    alices.refresh_from_db()
    assert alices.title == "Bob's party, shh"


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_no_admin_search_finds_a_conversation_by_title_or_a_message_by_text(
    alices: Conversation, accounts: dict[str, Any], role: str
) -> None:
    assert admin_walk.searches_finding(client_as(accounts[role]), ["Surprise", "bakery"]) == []


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_every_lookup_on_free_text_is_a_plain_400_for_every_account(
    alices: Conversation, accounts: dict[str, Any], role: str
) -> None:
    wrong = admin_walk.refused_lookups_that_answered(
        client_as(accounts[role]), "Surprise", PRIVATE_WORDS
    )

    assert wrong == [], "\n".join(wrong)


def test_lookups_the_admins_filters_use_still_answer(
    alices: Conversation, accounts: dict[str, Any]
) -> None:
    client = client_as(accounts["viewer"])

    assert client.get("/admin/webui/message/", {"role": "user"}).status_code == 200
    assert client.get("/admin/webui/conversation/", {"kind__exact": "chat"}).status_code == 200
    assert client.get("/admin/webui/scheduledjob/", {"q": "Morning"}).status_code == 200


def test_every_registered_admin_guards_its_free_text() -> None:
    found = [m for m in checks.run_checks(tags=[checks.Tags.admin]) if m.id == "webui.E003"]

    assert found == []


@pytest.mark.parametrize("role", ["viewer", "superuser"])
def test_a_password_hash_cannot_be_guessed_through_the_user_list(
    accounts: dict[str, Any], role: str
) -> None:
    client = client_as(accounts[role])

    for lookup in ("password__startswith", "password__contains", "password"):
        assert client.get("/admin/auth/user/", {lookup: "pbkdf2_sha256$"}).status_code == 400


def test_a_nul_in_a_search_or_an_autocomplete_term_is_a_plain_400(
    alices: Conversation, accounts: dict[str, Any]
) -> None:
    client = client_as(accounts["superuser"])
    autocomplete = {"app_label": "webui", "model_name": "conversation"}

    for field_name in ("viewer", "soul", "vessel"):
        query = {**autocomplete, "field_name": field_name, "term": "a\x00"}
        assert client.get("/admin/autocomplete/", query).status_code == 400
    # The list's own search: a NUL in any query string is refused at the site's door (400).
    assert client.get("/admin/webui/message/", {"q": "a\x00"}).status_code == 400


def test_the_action_log_written_before_is_relabelled_without_titles(alices: Conversation) -> None:
    kind = ContentType.objects.get_for_model(Conversation)
    logged = [
        LogEntry.objects.create(
            user=alices.viewer,
            content_type=kind,
            object_id=str(pk),
            object_repr=TITLE,
            action_flag=CHANGE,
        )
        for pk in (alices.pk, "0b5c4b1e-0000-4000-8000-000000000000")
    ]
    migration = importlib.import_module(
        "webui.migrations.0012_admin_log_labels_conversations_without_titles"
    )

    migration.relabel(apps, connection.schema_editor())

    for entry in logged:
        entry.refresh_from_db()
    assert [entry.object_repr for entry in logged] == [str(alices), "a deleted conversation"]
