"""schemathesis over every API the site serves, from the OpenAPI document the site itself serves at
``/api/schema/``: the chat API, the ledger, the memory items and the brain door. Generated requests,
valid and invalid, go over a real socket as a logged-in member (CSRF token as the pages send it),
and to the brain door signed as the engine signs; with the reference engine up, none finds a
server error, and every answer passes schemathesis's default checks (status documented, body
conforming to its documented schema, content type documented). Run on SQLite and PostgreSQL alike
(the suite's ``DATABASE_URL``)."""

from typing import Any

import pytest
import requests

from reference_engine.server import ReferenceEngine
from tests.support.api_fuzz import cookies_on_each_case, exercise, is_uuid, site_loaded
from tests.support.brain_door import NEW_SECRET, SignLikeTheEngine
from tests.support.household_memory import add_memory, grant_manage_memory
from tests.support.live_sessions import logged_in
from webui.models import Conversation, Vessel

pytestmark = pytest.mark.django_db(transaction=True)

#: Per operation and mode; 21 operations x 2 modes x 6 keeps one database's run near 35 s.
EXAMPLES_PER_OPERATION = 6
OPERATIONS = 21


def aim_at_real_rows(case: Any, *, conversation: Conversation, item: str, member: str) -> None:
    """Point well-formed ids and slugs at the member's own rows, so cases reach past the 404: the
    soul and the vessel by slug, the conversation, the item and the member by id. A DELETE of a
    conversation gets one of its own, so the others keep theirs."""
    parameters = case.path_parameters or {}
    if is_uuid(parameters.get("conversation_id")):
        target = conversation
        if case.method.upper() == "DELETE":
            target = Conversation.objects.create(
                soul=conversation.soul, vessel=conversation.vessel, viewer=conversation.viewer
            )
        parameters["conversation_id"] = str(target.id)
    if parameters.get("item_id") == "0":
        parameters["item_id"] = item
    if str(parameters.get("member", "")).isdigit():
        parameters["member"] = member
    query = case.query if isinstance(case.query, dict) else {}
    if "soul" in query:
        query["soul"] = conversation.soul.slug
    if "conversation" in query:
        query["conversation"] = str(conversation.id)
    body = case.body if isinstance(case.body, dict) else {}
    for field, slug in (("soul", conversation.soul.slug), ("vessel", conversation.vessel.slug)):
        if isinstance(body.get(field), str) and body[field].isidentifier():
            body[field] = slug


def site_schema(base_url: str, session: requests.Session) -> Any:
    """The OpenAPI document the site serves to a member, loaded for schemathesis."""
    answer = session.get(f"{base_url}/api/schema/", params={"format": "json"}, timeout=30)
    assert answer.status_code == 200, answer.text[:300]
    return site_loaded(answer.json())


def test_every_api_survives_generated_requests(
    live_server: Any, memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    from django.core.cache import cache

    cache.clear()
    configure(BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="100000/min", BRAIN_UNSIGNED_RATE="100000/min")
    Vessel.objects.filter(pk=conversation.vessel_id).update(brain_priority=1)
    member = grant_manage_memory(conversation.viewer)
    item = add_memory(memory_on, "Alice hides the biscuits.", scope="private", by=member)
    session = logged_in(live_server.url, member.username)
    schema = site_schema(live_server.url, session)
    cookies_on_each_case(schema, session)
    session.auth = SignLikeTheEngine()

    seen: dict[str, set[int]] = {}
    failures: dict[str, str] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == OPERATIONS, [operation.label for operation in operations]

    def send(case: Any) -> None:
        aim_at_real_rows(case, conversation=conversation, item=item, member=str(member.pk))
        response = case.call_and_validate(base_url=live_server.url, session=session)
        seen.setdefault(case.operation.label, set()).add(response.status_code)
        assert response.status_code < 500, response.text[:500]

    for operation in operations:
        try:
            exercise(operation, send, examples=EXAMPLES_PER_OPERATION * 2)
        except Exception as failure:  # every operation's first failure, not only the first's
            failures[operation.label] = f"{type(failure).__name__}: {failure}"[:3000]

    assert not failures, "\n\n".join(f"{label}: {text}" for label, text in failures.items())
    assert set(seen) == {operation.label for operation in operations}
    assert any(200 <= status < 300 for statuses in seen.values() for status in statuses)
