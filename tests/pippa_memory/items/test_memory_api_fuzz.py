"""schemathesis against the running memory items API, from its own OpenAPI document: generated
requests, valid and invalid, sent by a logged-in member with the CSRF token, with the reference
engine up and with it down. No request finds a server error: with the engine up every answer is
below 500; with it down the only 5xx is the documented 503 ``memory_unavailable`` with its reason,
and every answer passes schemathesis's other default checks."""

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode

from reference_engine.server import ReferenceEngine
from tests.support.fuzz_sessions import cookies_on_each_case
from tests.support.household_memory import add_memory
from tests.webui.api.test_chat_api_fuzz import logged_in, site_loaded

pytestmark = pytest.mark.django_db(transaction=True)

MEMORY_API = "/api/memory/"
EXAMPLES_PER_OPERATION = 30


@pytest.fixture
def memory_schema() -> Any:
    from drf_spectacular.generators import SchemaGenerator

    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    document["paths"] = {
        path: item
        for path, item in document["paths"].items()
        if path.startswith(MEMORY_API) and not path.startswith("/api/memory/brain/")
    }
    return site_loaded(document)


def exercise_every_operation(
    schema: Any, base_url: str, username: str, *, item: str, engine_down: bool
) -> dict[int, int]:
    """Send generated cases to every operation as ``username``; the statuses seen, counted."""
    session = logged_in(base_url, username)
    cookies_on_each_case(schema, session)

    seen: dict[int, int] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    # The items (list, add), one item (forget, change), correct, restore, a member, a chat's
    # memory (2), the download.
    assert len(operations) == 10
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
            query = case.query if isinstance(case.query, dict) else None
            if query is not None and "soul" in query and query["soul"] != "pippa":
                query["soul"] = "pippa"  # mostly the real soul, so the engine is asked
            if (case.path_parameters or {}).get("item_id") == "0":
                case.path_parameters["item_id"] = item
            excluded = [not_a_server_error] if engine_down else []
            response = case.call_and_validate(
                base_url=base_url, session=session, excluded_checks=excluded
            )
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                assert engine_down, response.text
                assert response.status_code == 503, response.text
                error = response.json()["error"]
                assert error["code"] == "memory_unavailable"
                assert error["details"]["reason"]

        exercise()
    return seen


def test_the_memory_api_survives_generated_requests_with_the_engine_up(
    live_server: Any, memory_schema: Any, memory_on: ReferenceEngine, soul: Any, user: Any
) -> None:
    item = add_memory(memory_on, "Alice hides the biscuits.", scope="private", by=user)

    seen = exercise_every_operation(
        memory_schema, live_server.url, user.username, item=item, engine_down=False
    )

    assert seen, "schemathesis generated no requests"
    assert 200 in seen


def test_the_memory_api_survives_generated_requests_with_the_engine_down(
    live_server: Any, memory_schema: Any, configure: Any, soul: Any, user: Any
) -> None:
    configure(URL="http://127.0.0.1:9")

    seen = exercise_every_operation(
        memory_schema, live_server.url, user.username, item="m0", engine_down=True
    )

    assert 503 in seen
    assert 500 not in seen
