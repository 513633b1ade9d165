"""schemathesis runs against the site's own OpenAPI document: the document loaded the way every
such run here loads it, a logged-in member's cookies on each generated case, and each operation
exercised with valid and invalid cases mixed."""

import json
import uuid
from collections.abc import Callable
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    NegativeDataRejectionConfig,
)
from schemathesis.generation import GenerationMode


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


def generated_document(keep: Callable[[str], bool]) -> Any:
    """The site's OpenAPI document as drf-spectacular generates it, with only the paths ``keep``
    accepts, loaded for schemathesis (see :func:`site_loaded`)."""
    from drf_spectacular.generators import SchemaGenerator

    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    document["paths"] = {path: item for path, item in document["paths"].items() if keep(path)}
    return site_loaded(document)


def cookies_on_each_case(schema: Any, session: requests.Session) -> None:
    """Move the logged-in ``session``'s session and CSRF cookies onto each generated case, in place
    of the session cookie schemathesis makes up for the document's ``cookieAuth`` scheme, so a case
    that leaves one out goes without."""
    cookies = {name: session.cookies[name] for name in ("sessionid", "csrftoken")}
    session.cookies.clear()

    @schema.auth()
    class MemberSession:
        def get(self, case: Any, ctx: Any) -> dict[str, str]:
            return cookies

        def set(self, case: Any, data: dict[str, str], ctx: Any) -> None:
            case.cookies = {**(case.cookies or {}), **data}


def exercise(operation: Any, send: Callable[[Any], None], *, examples: int) -> None:
    """Hand ``send`` up to ``examples`` generated cases of ``operation``, valid and invalid ones
    mixed; hypothesis reports the first case that fails, shrunk."""
    strategy = st.one_of(
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )
    settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )(given(case=strategy)(send))()


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a well-formed UUID (as a path parameter, say)."""
    if value is None:
        return False
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True
