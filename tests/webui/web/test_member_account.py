"""A member's own account page (issue 38): the name they go by, their default model and their
time zone (times on their pages are shown in it), and their password through Django's own
views, all with the site's forms and CSRF. Bad input is said and changes nothing."""

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.factory_defaults import PASSWORD
from webui.models import Conversation, MemberSettings, Message, Vessel
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-new-household-password-77"
KIRITIMATI = "Pacific/Kiritimati"  # UTC+14: a time shown in UTC reads otherwise


def member_client(user: Any, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def csrf_token(client: Client, path: str) -> str:
    client.get(path)
    return client.cookies["csrftoken"].value


def save(client: Client, **fields: Any) -> Any:
    data = {"display_name": "", "default_vessel": "", "time_zone": "", **fields}
    return client.post("/accounts/", data)


def test_the_account_page_saves_name_default_model_and_time_zone(
    user: Any, offline_vessel: Vessel
) -> None:
    client = member_client(user)
    page = client.get("/accounts/").content.decode()
    assert "Your account" in page
    assert 'href="/accounts/password_change/"' in page

    response = save(
        client, display_name="  Mum  ", default_vessel=offline_vessel.pk, time_zone=KIRITIMATI
    )

    assert response.status_code == 302
    user.refresh_from_db()
    assert user.get_full_name() == "Mum"
    kept = MemberSettings.objects.get(user=user)
    assert (kept.default_vessel, kept.time_zone) == (offline_vessel, KIRITIMATI)
    assert "Your account is saved." in client.get("/accounts/").content.decode()


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("time_zone", "Mars/Olympus_Mons", "is not a time zone this server knows"),
        ("display_name", "Mum\u202e", "cannot hold control characters"),
        ("display_name", "x" * 151, "at most 150 characters"),
        ("default_vessel", "999999", "switched off or gone"),
    ],
)
def test_bad_input_is_said_and_changes_nothing(
    user: Any, offline_vessel: Vessel, field: str, value: str, said: str
) -> None:
    client = member_client(user)

    response = save(client, **{field: value})

    assert response.status_code == 200
    assert said in response.content.decode()
    assert "Not saved" in response.content.decode()
    user.refresh_from_db()
    assert user.get_full_name() == "Alice"
    assert not MemberSettings.objects.exists()


def test_a_switched_off_model_cannot_be_a_members_default(
    user: Any, offline_vessel: Vessel
) -> None:
    Vessel.objects.filter(pk=offline_vessel.pk).update(enabled=False)

    response = save(member_client(user), default_vessel=offline_vessel.pk)

    assert "switched off or gone" in response.content.decode()
    assert not MemberSettings.objects.exists()


def test_the_account_page_refuses_a_post_without_its_csrf_token(user: Any) -> None:
    client = member_client(user, csrf=True)

    response = save(client, display_name="Mum")

    assert response.status_code == 403
    user.refresh_from_db()
    assert user.get_full_name() == "Alice"


def test_times_on_the_members_pages_are_in_the_zone_they_chose(
    user: Any, conversation: Conversation
) -> None:
    moment = datetime(2026, 12, 1, 9, 5, tzinfo=UTC)
    Message.objects.create(conversation=conversation, role="user", content="hi")
    Message.objects.filter(conversation=conversation).update(created_at=moment)
    Conversation.objects.filter(pk=conversation.pk).update(title="Garden")
    client = member_client(user)
    household = client.get("/").content.decode()
    assert "09:05" in household

    MemberSettings.objects.create(user=user, time_zone=KIRITIMATI)
    mine = client.get("/").content.decode()

    assert f"{moment.astimezone(ZoneInfo(KIRITIMATI)):%H:%M}" == "23:05"
    assert "23:05" in mine
    assert "09:05" not in mine


def test_the_name_a_member_goes_by_reaches_their_next_chat(
    user: Any, make_conversation: Any
) -> None:
    save(member_client(user), display_name="Mum")
    conversation = Conversation.objects.get(pk=make_conversation().pk)  # as a request loads it

    run_turn(conversation=conversation, text="hello")

    conversation.refresh_from_db()
    assert conversation.disclosure.startswith("You are talking with Mum,")


def test_a_member_changes_their_password_with_djangos_views_and_stays_logged_in(
    user: Any,
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    token = csrf_token(client, "/accounts/password_change/")
    page = client.get("/accounts/password_change/").content.decode()
    assert "Change your password" in page
    assert "Old password" in page

    wrong = client.post(
        "/accounts/password_change/",
        {
            "old_password": "not-it",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "csrfmiddlewaretoken": token,
        },
    )
    assert wrong.status_code == 200
    assert "Not changed" in wrong.content.decode()
    assert get_user_model().objects.get(pk=user.pk).check_password(PASSWORD)

    changed = client.post(
        "/accounts/password_change/",
        {
            "old_password": PASSWORD,
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "csrfmiddlewaretoken": token,
        },
    )

    assert changed.status_code == 302
    assert changed["Location"] == "/accounts/"
    assert get_user_model().objects.get(pk=user.pk).check_password(NEW_PASSWORD)
    assert "Your password is changed" in client.get("/accounts/").content.decode()
    assert client.get("/").status_code == 200, "still logged in after the change"
    again = Client().post(
        "/accounts/login/", {"username": "alice", "password": NEW_PASSWORD}, REMOTE_ADDR="10.0.0.2"
    )
    assert again.status_code == 302, "the new password logs in"


def test_anyone_not_logged_in_is_sent_to_log_in(db: None) -> None:
    for path in ("/accounts/", "/accounts/password_change/"):
        response = Client().get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
