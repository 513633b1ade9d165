"""schemathesis against the running chat API, from its own OpenAPI document: generated requests,
valid and invalid, sent by a logged-in member with the CSRF token as the chat page sends it, find
no server error and pass schemathesis's default checks."""

from typing import Any

import pytest

from tests.support.api_fuzz import cookies_on_each_case, exercise, generated_document, is_uuid
from tests.support.live_sessions import logged_in
from webui.models import Conversation

pytestmark = pytest.mark.django_db(transaction=True)

CHAT_API = "/api/conversations/"
EXAMPLES_PER_OPERATION = 40


@pytest.fixture
def chat_schema() -> Any:
    return generated_document(lambda path: path.startswith(CHAT_API))


def test_the_chat_api_survives_generated_requests(
    live_server: Any, chat_schema: Any, conversation: Conversation, user: Any
) -> None:
    session = logged_in(live_server.url, user.username)
    cookies_on_each_case(chat_schema, session)

    seen: dict[int, int] = {}
    operations = [result.ok() for result in chat_schema.get_all_operations()]
    assert len(operations) == 9

    def send(case: Any) -> None:
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

    for operation in operations:
        exercise(operation, send, examples=EXAMPLES_PER_OPERATION)

    assert seen, "schemathesis generated no requests"
    assert not any(status >= 500 for status in seen)
