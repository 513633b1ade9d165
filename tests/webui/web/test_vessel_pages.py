"""Vessels as the household sees them: adapter, model, endpoint, whether the key is present (never
the key), a "test connection" that makes one small real call, and a vessel added in the admin that
can be talked through once its key is set."""

from typing import Any

import pytest
import responses
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.test import APIClient

from provider_doubles import AnthropicKit
from tests.support import vessels
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db

SECRET = "sk-ant-a-very-secret-key-0123456789"


@pytest.fixture
def staff_client(make_user: Any) -> Client:
    client = Client()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Vessel:
    return vessels.claude(monkeypatch, SECRET)


def test_the_vessel_page_shows_key_presence_but_never_the_key(
    staff_client: Client, claude: Vessel, offline_vessel: Vessel, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = staff_client.get("/vessels/").content.decode()

    assert "Anthropic Messages" in page
    assert "claude-sonnet-4-5" in page
    assert "provider default" in page
    assert "key present in HOUSEHOLD_ANTHROPIC_KEY" in page
    assert "no key needed" in page
    assert SECRET not in page

    monkeypatch.delenv("HOUSEHOLD_ANTHROPIC_KEY")
    page = staff_client.get("/vessels/").content.decode()
    assert "key missing: set HOUSEHOLD_ANTHROPIC_KEY" in page
    assert "HOUSEHOLD_ANTHROPIC_KEY, which is not set" in page


def test_the_admin_list_shows_key_presence_but_never_the_key(
    staff_client: Client, claude: Vessel
) -> None:
    page = staff_client.get("/admin/webui/vessel/").content.decode()

    assert "key present in HOUSEHOLD_ANTHROPIC_KEY" in page
    assert SECRET not in page


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        pytest.param(
            lambda kit: (200, kit.text_body("ok"), {}),
            ["Claude answered in", "“ok”"],
            id="an answer",
        ),
        pytest.param(
            lambda kit: kit.error("auth_failed"),
            ["Claude failed: Anthropic answered HTTP 401: Anthropic says auth_failed"],
            id="a failure in plain words",
        ),
    ],
)
@responses.activate
def test_test_connection_makes_one_small_call_and_says_how_it_went(
    staff_client: Client, claude: Vessel, answer: Any, said: list[str]
) -> None:
    kit = AnthropicKit()
    status, body, headers = answer(kit)
    kit.queue(responses, status, body, **headers)

    text = staff_client.post("/vessels/claude/test/", follow=True).content.decode()

    assert len(responses.calls) == 1
    assert b'"tools"' not in responses.calls[0].request.body
    for words in said:
        assert words in text
    assert SECRET not in text


@responses.activate
def test_the_admin_action_tests_connections(staff_client: Client, claude: Vessel) -> None:
    kit = AnthropicKit()
    kit.queue(responses, 200, kit.text_body("ok"))

    response = staff_client.post(
        "/admin/webui/vessel/",
        {"action": "run_connection_test", "_selected_action": [claude.pk]},
        follow=True,
    )

    assert "Claude answered in" in response.content.decode()


@responses.activate
def test_a_vessel_added_in_the_admin_can_be_talked_through_once_its_key_is_set(
    staff_client: Client, soul: Soul, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = staff_client.post(
        "/admin/webui/vessel/add/",
        vessels.admin_form(
            slug="claude",
            name="Claude",
            adapter="anthropic",
            model="claude-sonnet-4-5",
            api_key_env="HOUSEHOLD_ANTHROPIC_KEY",
        ),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    api = APIClient()
    api.force_login(user)
    conversation = api.post(
        "/api/conversations/", {"soul": "pippa", "vessel": "claude"}, format="json"
    ).json()
    url = f"/api/conversations/{conversation['id']}/messages/"

    monkeypatch.delenv("HOUSEHOLD_ANTHROPIC_KEY", raising=False)
    refused = api.post(url, {"text": "hello"}, format="json")
    assert refused.status_code == 502
    assert refused.json()["error"]["code"] == "not_configured"
    # The member reads the cause in a family's words; the key's variable is for the admin.
    assert "Claude is not set up right" in refused.json()["error"]["message"]
    assert "HOUSEHOLD_ANTHROPIC_KEY" not in refused.content.decode()
    assert len(responses.calls) == 0

    monkeypatch.setenv("HOUSEHOLD_ANTHROPIC_KEY", SECRET)
    kit = AnthropicKit()
    kit.queue(responses, 200, kit.text_body("Hello from Claude"))
    answered = api.post(f"/api/conversations/{conversation['id']}/retry/", {}, format="json")

    assert answered.status_code == 201
    assert answered.json()["assistant"]["content"] == "Hello from Claude"
    assert responses.calls[0].request.headers["x-api-key"] == SECRET


def test_a_member_sees_which_vessels_are_ready_but_no_endpoint_key_variable_or_control(
    user: Any, claude: Vessel, monkeypatch: pytest.MonkeyPatch
) -> None:
    Vessel.objects.filter(pk=claude.pk).update(
        base_url="https://llm.household.example/v1", last_outcome=Vessel.Outcome.ANSWERED
    )
    Vessel.objects.create(
        slug="local", name="Local", adapter="openai", model="m", api_key_env="LOCAL_LLM_KEY"
    )
    member = Client()
    member.force_login(user)

    page = member.get("/vessels/").content.decode()

    assert "Claude" in page
    assert "Local" in page
    assert page.count('class="usable">Ready') == 1
    assert "Not set up yet" in page
    for hidden in (
        "HOUSEHOLD_ANTHROPIC_KEY",
        "LOCAL_LLM_KEY",
        "llm.household.example",
        "Turn off",
        "Test connection",
        "/memory-tool/",
        "/test/",
    ):
        assert hidden not in page, hidden


@responses.activate
def test_the_change_vessel_permission_not_staff_decides_who_may_test_a_connection(
    user: Any, make_user: Any, claude: Vessel
) -> None:
    staff = Client()
    staff.force_login(make_user("staff", is_staff=True))
    assert staff.post("/vessels/claude/test/").status_code == 403
    assert len(responses.calls) == 0

    user.user_permissions.add(Permission.objects.get(codename="change_vessel"))
    member = Client()
    member.force_login(user)
    kit = AnthropicKit()
    kit.queue(responses, 200, kit.text_body("ok"))
    page = member.get("/vessels/").content.decode()
    assert "key present in HOUSEHOLD_ANTHROPIC_KEY" in page
    response = member.post("/vessels/claude/test/", follow=True)

    assert len(responses.calls) == 1
    assert "Claude answered in" in response.content.decode()


@responses.activate
def test_a_view_only_admin_account_is_not_offered_the_connection_test(
    make_user: Any, claude: Vessel
) -> None:
    viewer = make_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_vessel"))
    client = Client()
    client.force_login(viewer)

    listed = client.get("/admin/webui/vessel/").content.decode()
    client.post(
        "/admin/webui/vessel/", {"action": "run_connection_test", "_selected_action": [claude.pk]}
    )

    assert "run_connection_test" not in listed
    assert len(responses.calls) == 0
