"""The admin keeps history honest: what a conversation's soul was told (its messages, its pin, its
vault base, the tools it was offered) is read in the admin and never changed there, not on a new
conversation either, nor is its title (the member's words); vault snapshots are records nobody edits; "View on site" is offered exactly
where the account has a page for the object; the site and the admin carry an icon."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.admin_links import SiteLink, registered_labels, wrong_site_links
from tests.support.clients import client_as
from tests.support.host_world import HostWorld
from webui.models import Conversation, Message, UnattendedRun, VaultSnapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(make_user: Any) -> Any:
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def roots_reply(root: Any, make_conversation: Any) -> Message:
    """A reply in the superuser's own conversation: the one account that sees its text."""
    conversation = make_conversation(viewer=root)
    Message.objects.create(conversation=conversation, role="user", content="Tea, please.")
    return Message.objects.create(
        conversation=conversation,
        role="assistant",
        content="Tea it is.",
        tool_uses=[{"id": "t1", "name": "memory", "input": {"verb": "recall"}, "output": {}}],
    )


def test_a_message_is_read_in_the_admin_and_never_added_changed_or_deleted(
    root: Any, roots_reply: Message
) -> None:
    client = client_as(root)
    url = f"/admin/webui/message/{roots_reply.pk}/"

    page = client.get(f"{url}change/").content.decode()
    changed = client.post(
        f"{url}change/", {"content": "Rewritten.", "role": "user", "tool_uses": "[]"}
    )
    deleted = client.post(f"{url}delete/", {"post": "yes"})
    listed = client.get("/admin/webui/message/").content.decode()
    bulk = client.post(
        "/admin/webui/message/",
        {"action": "delete_selected", "_selected_action": [roots_reply.pk], "post": "yes"},
    )

    assert "Tea it is." in page  # its own viewer reads it
    assert 'name="content"' not in page
    assert 'name="tool_uses"' not in page
    assert changed.status_code == 403
    assert deleted.status_code == 403
    assert client.get("/admin/webui/message/add/").status_code == 403
    assert 'value="delete_selected"' not in listed
    assert bulk.status_code == 200  # the list again: there is no such action
    roots_reply.refresh_from_db()
    assert roots_reply.content == "Tea it is."
    assert roots_reply.role == "assistant"
    assert Message.objects.filter(conversation=roots_reply.conversation).count() == 2


def test_a_conversations_change_form_edits_its_vessel_and_nothing_of_its_history_or_title(
    root: Any, roots_reply: Message
) -> None:
    conversation = roots_reply.conversation

    page = client_as(root).get(f"/admin/webui/conversation/{conversation.pk}/change/")

    editable = {
        field.name
        for field in page.context["adminform"].form
        if not field.is_hidden and field.name in page.context["adminform"].form.fields
    }
    # The title is the member's words: renamed on their own pages, never here.
    assert editable == {"vessel"}
    (inline,) = page.context["inline_admin_formsets"]
    assert not inline.has_add_permission
    assert not inline.has_change_permission
    assert not inline.has_delete_permission
    html = page.content.decode()
    assert "Tea it is." in html
    assert 'name="messages-0-content"' not in html


def test_a_new_conversation_in_the_admin_cannot_be_given_a_pin_or_tools(
    root: Any, soul: Any, offline_vessel: Any, user: Any
) -> None:
    form = {
        "title": "Started by staff",
        "soul": soul.pk,
        "vessel": offline_vessel.pk,
        "viewer": user.pk,
        "kind": Conversation.Kind.CHAT,
        "pinned_head": "r-forged",
        "pinned_at_0": "2026-12-01",
        "pinned_at_1": "09:00:00",
        "vault_sha256": "f" * 64,
        "offered_tools": '[{"name": "forged"}]',
        "messages-TOTAL_FORMS": "0",
        "messages-INITIAL_FORMS": "0",
        "messages-MIN_NUM_FORMS": "0",
        "messages-MAX_NUM_FORMS": "1000",
    }

    answer = client_as(root).post("/admin/webui/conversation/add/", form)

    assert answer.status_code == 302
    created = Conversation.objects.get(viewer=user)
    assert created.title == ""  # its member's first words will title it, not staff
    assert (created.pinned_head, created.pinned_at) == (None, None)
    assert created.vault_sha256 == ""
    assert created.offered_tools is None


def test_vault_snapshots_are_listed_and_read_but_never_added_changed_or_deleted(
    root: Any, soul: Any
) -> None:
    snapshot = VaultSnapshot.objects.create(soul=soul, sha256="d9d0" + "a" * 60, text="I am Pippa.")
    client = client_as(root)
    url = f"/admin/webui/vaultsnapshot/{snapshot.pk}/"

    listed = client.get("/admin/webui/vaultsnapshot/").content.decode()
    page = client.get(f"{url}change/").content.decode()
    changed = client.post(f"{url}change/", {"text": "I am someone else.", "soul": soul.pk})

    assert "d9d0aaaaaaaa" in listed
    assert "Pippa" in listed
    assert 'value="delete_selected"' not in listed
    assert "I am Pippa." in page
    assert "<textarea" not in page
    assert changed.status_code == 403
    assert client.get("/admin/webui/vaultsnapshot/add/").status_code == 403
    assert client.post(f"{url}delete/", {"post": "yes"}).status_code == 403
    snapshot.refresh_from_db()
    assert snapshot.text == "I am Pippa."


def test_view_on_site_is_offered_exactly_where_the_account_has_a_page(
    world: HostWorld,
    make_conversation: Any,
) -> None:
    root, member = world.users["superuser"], world.users["member"]
    job = make_conversation(viewer=None, kind=Conversation.Kind.JOB)
    job_run = UnattendedRun.objects.create(kind="job", soul=world.soul, conversation=job)
    unattended_without_run = make_conversation(viewer=None, kind=Conversation.Kind.WAKE)
    own = world.conversation("superuser")
    cases = [
        SiteLink("a vessel", world.vessel, root, f"/vessels/#vessel-{world.vessel.slug}"),
        SiteLink("an unattended run", world.run, root, f"/stream/#run-{world.run.pk}"),
        SiteLink("staff's own chat", own, root, f"/conversations/{own.pk}/"),
        SiteLink("a member's chat", world.conversation("member"), root, None),
        SiteLink("a job's conversation", job, root, f"/stream/#run-{job_run.pk}"),
        SiteLink("a run's conversation, its run pruned", unattended_without_run, root, None),
        SiteLink("a soul", world.soul, root, None),
        SiteLink("a message", world.message, root, None),
        SiteLink("a scheduled job", world.job, root, None),
        SiteLink("a daily chore", world.chore, root, None),
        SiteLink("a vault snapshot", world.snapshot, root, None),
        SiteLink("a ledger row", world.vessel_call, root, None),
        SiteLink("a move of a chat to another model", world.vessel_move, root, None),
        SiteLink("a user", member, root, None),
        SiteLink("a group", world.group, root, None),
        SiteLink("a login attempt", world.login_attempt, root, None),
        SiteLink("a login", world.login_log, root, None),
        SiteLink("a failed login", world.login_failure, root, None),
    ]
    walked = {case.obj._meta.label_lower for case in cases}
    assert walked == registered_labels(not_owned_by="pippa_memory"), "a model is not walked"

    assert wrong_site_links(cases) == []


def test_the_site_and_the_admin_carry_an_icon_and_favicon_ico_answers(root: Any) -> None:
    client = client_as(root)

    redirect = Client().get("/favicon.ico")
    icon = Client().get(redirect["Location"])
    body = b"".join(icon.streaming_content) if icon.streaming else icon.content

    assert redirect.status_code == 302
    assert redirect["Location"] == "/static/webui/favicon.svg"
    assert icon.status_code == 200
    assert icon["Content-Type"].startswith("image/svg+xml")
    assert body.startswith(b"<svg")
    link = '<link rel="icon" href="/static/webui/favicon.svg" type="image/svg+xml">'
    for path in ("/", "/accounts/login/", "/admin/", "/admin/webui/conversation/"):
        assert link in client.get(path).content.decode(), path
    assert get_user_model().objects.count() == 1
