"""``GET /api/ledger/?conversation=<id>``: the conversation's calls, oldest first, in the documented
shape, for staff who may view vessel calls; members get 403; a bad id 400, an unknown one 404; and
no prompt text in it."""

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from webui.models import Conversation, VaultSnapshot
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

SECTIONS = {"tools", "vault", "memory", "disclosure", "history", "turn"}


@pytest.fixture
def staff(make_user: Any) -> Any:
    account = make_user("keeper", is_staff=True)
    account.user_permissions.add(Permission.objects.get(codename="view_vesselcall"))
    return account


def as_user(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def ledger_of(client: APIClient, conversation: Any) -> Any:
    return client.get("/api/ledger/", {"conversation": str(conversation)})


def test_staff_read_every_call_oldest_first_in_the_documented_shape(
    conversation: Conversation, staff: Any, recording_tool: Any
) -> None:
    run_turn(conversation=conversation, text="hello")
    second = run_turn(conversation=conversation, text="remember the bins go out on Tuesday")

    response = ledger_of(as_user(staff), conversation.id)

    assert response.status_code == 200, response.content
    rows = response.json()
    assert [(row["message"], row["round"]) for row in rows][1:] == [
        (str(second.user_message.id), 0),
        (str(second.user_message.id), 1),
    ]
    for row in rows:
        assert set(row) == {
            "message",
            "round",
            "vessel",
            "model",
            "usage",
            "prefix_bytes",
            "sections",
            "drift",
            "created_at",
        }
        assert row["vessel"] == conversation.vessel.slug
        assert set(row["usage"]) == {
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
        }
        assert set(row["sections"]) == SECTIONS
        assert all(len(digest) == 64 for digest in row["sections"].values())
        assert row["drift"] is None
        assert row["prefix_bytes"] > 0
    assert rows[0]["prefix_bytes"] < rows[1]["prefix_bytes"] < rows[2]["prefix_bytes"]


def test_a_drift_answers_its_section_and_cause_or_null_for_no_known_cause(
    conversation: Conversation, staff: Any
) -> None:
    run_turn(conversation=conversation, text="hello")
    VaultSnapshot.objects.create(soul=conversation.soul, sha256="e" * 64, text="Moved.")
    Conversation.objects.filter(pk=conversation.pk).update(vault_sha256="e" * 64)
    conversation.refresh_from_db()
    run_turn(conversation=conversation, text="again")

    rows = ledger_of(as_user(staff), conversation.id).json()

    assert [row["drift"] for row in rows] == [None, {"section": "vault", "cause": None}]


def test_the_ledger_holds_no_prompt_text(conversation: Conversation, staff: Any) -> None:
    run_turn(conversation=conversation, text="my secret is the blue pot")

    body = ledger_of(as_user(staff), conversation.id).content.decode()

    assert "blue pot" not in body
    assert "Pippa" not in body  # nothing of the vault either
    assert "Alice" not in body  # nor of the disclosure


def test_members_and_staff_without_the_permission_get_403(
    conversation: Conversation, user: Any, make_user: Any
) -> None:
    run_turn(conversation=conversation, text="hello")

    own = ledger_of(as_user(user), conversation.id)
    bare_staff = ledger_of(as_user(make_user("bare", is_staff=True)), conversation.id)
    anonymous = ledger_of(APIClient(), conversation.id)

    for response in (own, bare_staff, anonymous):
        assert response.status_code == 403
        assert response.json()["error"]["code"] in {"permission_denied", "not_authenticated"}


@pytest.mark.parametrize("query", [{}, {"conversation": "not-a-uuid"}, {"conversation": ""}])
def test_a_missing_or_malformed_conversation_is_a_400_naming_it(
    staff: Any, query: dict[str, str]
) -> None:
    response = as_user(staff).get("/api/ledger/", query)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "conversation" in error["details"]


def test_an_unknown_conversation_is_a_404(staff: Any) -> None:
    response = ledger_of(as_user(staff), uuid.uuid4())

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_ledger_is_in_the_api_schema(staff: Any) -> None:
    schema = as_user(staff).get("/api/schema/", {"format": "json"}).json()

    operation = schema["paths"]["/api/ledger/"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["conversation"]
    # 414: every operation documents the long-address refusal (webui/api/schema_hooks.py).
    assert set(operation["responses"]) == {"200", "400", "403", "404", "414"}
