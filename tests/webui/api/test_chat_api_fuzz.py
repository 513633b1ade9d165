"""schemathesis against the running chat API, from its own OpenAPI document: generated requests,
valid and invalid, sent by a logged-in member with the CSRF token as the chat page sends it, find
no server error and pass schemathesis's default checks."""

import json
import uuid
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    NegativeDataRejectionConfig,
)
from schemathesis.generation import GenerationMode

from tests.conftest import PASSWORD
from webui.models import Conversation

pytestmark = pytest.mark.django_db(transaction=True)

CHAT_API = "/api/conversations/"
EXAMPLES_PER_OPERATION = 40


@pytest.fixture
def chat_schema() -> Any:
    from drf_spectacular.generators import SchemaGenerator

    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    document["paths"] = {
        path: item for path, item in document["paths"].items() if path.startswith(CHAT_API)
    }
    return site_loaded(document)


def site_loaded(document: dict[str, Any]) -> Any:
    """``document`` loaded for schemathesis, a 414 counted as a rejection of invalid data: the
    site's long-address guard (webui/web/long_url_guard.py) refuses an address past its limit, and
    a negative case's over-long query value makes one. Every operation documents that 414, so
    undocumented statuses and server errors still fail."""
    schema = schemathesis.openapi.from_dict(document)
    schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
        expected_statuses=[*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "414"]
    )
    return schema


def logged_in(base_url: str, username: str) -> requests.Session:
    """A session logged in through the login form, sending the CSRF token as the chat page does."""
    session = requests.Session()
    session.get(f"{base_url}/accounts/login/", timeout=10)
    answer = session.post(
        f"{base_url}/accounts/login/",
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        timeout=10,
    )
    assert answer.url.rstrip("/") == base_url, "the login did not take"
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session


def is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return value is not None


def test_the_chat_api_survives_generated_requests(
    live_server: Any, chat_schema: Any, conversation: Conversation, user: Any
) -> None:
    session = logged_in(live_server.url, user.username)
    # The cookies go on each case instead (below), so a case that leaves one out goes without.
    member_cookies = {name: session.cookies[name] for name in ("sessionid", "csrftoken")}
    session.cookies.clear()

    @chat_schema.auth()
    class MemberSession:
        """The member's session and CSRF cookies, in place of the session cookie schemathesis
        makes up for the document's ``cookieAuth`` scheme."""

        def get(self, case: Any, ctx: Any) -> dict[str, str]:
            return member_cookies

        def set(self, case: Any, data: dict[str, str], ctx: Any) -> None:
            case.cookies = {**(case.cookies or {}), **data}

    seen: dict[int, int] = {}
    operations = [result.ok() for result in chat_schema.get_all_operations()]
    assert len(operations) == 9

    for operation in operations:
        strategy = st.one_of(
            operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
            operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
        )

        @given(case=strategy)
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def exercise(case: Any) -> None:
            if is_uuid((case.path_parameters or {}).get("conversation_id")):
                # A random id is only ever a 404: send the case to the member's conversation, or
                # a DELETE to a conversation of its own, so the others still have theirs.
                target = conversation
                if case.method.upper() == "DELETE":
                    target = Conversation.objects.create(
                        soul=conversation.soul, vessel=conversation.vessel, viewer=user
                    )
                case.path_parameters["conversation_id"] = str(target.id)
            response = case.call_and_validate(base_url=live_server.url, session=session)
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            assert response.status_code < 500, response.text

        exercise()

    assert seen, "schemathesis generated no requests"
    assert not any(status >= 500 for status in seen)
