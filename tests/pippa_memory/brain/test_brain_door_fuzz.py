"""schemathesis against the running brain door: generated requests, valid and invalid, signed as
the engine would sign them, find no server error and pass schemathesis's default checks."""

import json
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.support.brain_door import NEW_SECRET, SignLikeTheEngine
from webui.models import Vessel

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def door_schema(configure: Any) -> Any:
    from django.core.cache import cache
    from drf_spectacular.generators import SchemaGenerator

    cache.clear()
    configure(BRAIN_SECRET=NEW_SECRET, BRAIN_RATE="100000/min", BRAIN_UNSIGNED_RATE="100000/min")
    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    return schemathesis.openapi.from_dict(document)


def test_the_door_survives_generated_requests(
    live_server: Any, door_schema: Any, soul: Any
) -> None:
    Vessel.objects.create(
        slug="offline", name="Offline", adapter="offline", model="offline-1", brain_priority=1
    )
    operation = door_schema["/api/memory/brain/"]["POST"]
    session = requests.Session()
    session.auth = SignLikeTheEngine()
    seen: dict[int, int] = {}

    @given(case=operation.as_strategy())
    @settings(
        max_examples=120,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def exercise(case: Any) -> None:
        response = case.call_and_validate(base_url=live_server.url, session=session)
        seen[response.status_code] = seen.get(response.status_code, 0) + 1
        assert response.status_code < 500 or response.status_code in (502, 503, 504)

    exercise()

    assert seen, "schemathesis generated no requests"
    assert not any(500 <= status < 502 for status in seen)
