"""A walk over every route of the engine as the Procfile runs it (gunicorn, its own process), on
SQLite and on PostgreSQL: wrong methods, malformed, huge and deep bodies, bad limits, 64-bit
overflows, NUL and lone surrogates in bodies, query strings and paths. Every answer is the
contract's JSON error with the right status: never a 500, never a page that is not JSON, never
Python's own words, and nothing the walk sent changes what the engine keeps."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from reference_engine.control import CONTROL_URLS
from reference_engine.reading import MAX_BODY_BYTES, MAX_DEPTH, MAX_URL_BYTES
from reference_engine.request_schemas import operations
from reference_engine.routes import CONTRACT_URLS
from tests.support.engine_calls import headers, turn_event
from tests.support.engine_processes import engine_process

PATH_SAMPLES = {"soul": "pippa", "revision": "r1", "id": "walk-item", "member": "7"}
BODIES: dict[str, dict[str, Any]] = {
    "postEvent": turn_event("The walk leaves no memory behind.", event_id="walk-event"),
    "recall": {"soul": "pippa", "conversation": "c1", "viewer": "7", "query": "tea", "limit": 5},
    "ask": {"soul": "pippa", "conversation": "c1", "viewer": "7", "question": "tea?"},
    "ackAnswers": {"ids": ["a1"]},
    "wakeBrief": {"soul": "pippa", "wake": {"kind": "soul_stream", "id": "w1"}},
    "bundle": {"soul": "pippa", "job": {"id": "j1", "name": "Digest"}, "revision": None},
    "rescopeItem": {"viewer": "7", "scope": "household"},
    "addItem": {
        "viewer": "7",
        "name": "Alice",
        "text": "The walk adds a note.",
        "scope": "private",
    },
    "correctItem": {"viewer": "7", "name": "Alice", "text": "The walk corrects a note."},
    "restoreItem": {"viewer": "7"},
    "importItems": {
        "items": [
            {
                "id": "walk-import",
                "text": "The walk imports nothing.",
                "at": "2026-12-03T09:00:00Z",
                "scope": "household",
                "said_by": None,
                "source": {"conversation": None, "message": None, "tool_use": None},
                "keep": False,
            }
        ]
    },
}
"""A valid body for each route that takes one; each field is then spoiled in turn."""

SPOILED_VALUES = {
    "nul": "tea\u0000time",
    "lone_surrogate": "tea\ud800",
    "past_64_bits": 2**63,
    "below_64_bits": -(2**63) - 1,
    "true": True,
    "deep": json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)),
}
"""Values no field of any route takes: each is a 400 wherever it is put."""

BAD_QUERIES = {
    "empty_viewer": "viewer=",
    "nul_viewer": "viewer=7%00",
    "surrogate_viewer": "viewer=%ED%A0%80",
    "not_utf8_viewer": "viewer=%FF",
    "limit_zero": "limit=0",
    "limit_past_100": "limit=101",
    "limit_past_64_bits": f"limit={2**63}",
    "limit_negative": "limit=-1",
    "limit_words": "limit=ten",
    "limit_twice": "limit=1&limit=2",
    "cursor_past_64_bits": "cursor=before-9223372036854775808",
    "cursor_nul": "cursor=before-1%00",
    "q_nul": "q=tea%00",
}

BAD_PATH_TEXT = {"nul": "pi%00pa", "lone_surrogate": "pi%ED%A0%80pa", "not_utf8": "pi%FFpa"}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PYTHON_WORDS = ("Traceback", "object has no attribute", "Error:", "line ", "<html", "<!DOCTYPE")


def routes() -> Iterator[tuple[str, str, set[str]]]:
    """Each contract route: its operation, a concrete path, and the methods it takes."""
    by_path: dict[str, tuple[str, set[str]]] = {}
    for rule in CONTRACT_URLS.iter_rules():
        path = rule.rule
        for name, sample in PATH_SAMPLES.items():
            path = path.replace(f"<{name}>", sample)
        operation, methods = by_path.get(path, (rule.endpoint, set()))
        by_path[path] = (operation, methods | set(rule.methods or ()))
    for path, (operation, methods) in by_path.items():
        yield operation, path, methods
    for rule in CONTROL_URLS.iter_rules():
        yield rule.endpoint, rule.rule, set(rule.methods or ())


def assert_contract_error(answer: requests.Response, status: int, what: str) -> None:
    """The answer is the contract's JSON error with ``status``, in the engine's own words."""
    assert answer.status_code == status, f"{what}: {answer.status_code} {answer.text[:300]}"
    assert answer.headers["Content-Type"] == "application/json", what
    assert answer.headers.get("X-Request-Id"), what
    error = answer.json()["error"]
    assert isinstance(error["code"], str), what
    assert isinstance(error["message"], str), what
    assert not any(words in answer.text for words in PYTHON_WORDS), f"{what}: {answer.text}"


def send(url: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    sent = {**headers(), **kwargs.pop("headers", {})}
    return requests.request(method, url + path, headers=sent, timeout=30, **kwargs)


def head_revision(url: str) -> str:
    answer = send(url, "GET", "/v1/souls/pippa/head")
    assert answer.status_code == 200, answer.text
    return answer.json()["revision"]


@pytest.fixture
def engine_url(engine_database: str) -> Iterator[str]:
    """The engine as the Procfile runs it, with the control door, on ``engine_database``."""
    with engine_process(engine_database, "--control") as (url, _):
        yield url


def test_the_walk_has_a_body_for_every_route_that_takes_one() -> None:
    takes_body = {name for name, operation in operations().items() if "requestBody" in operation}
    assert takes_body == set(BODIES)


def test_a_wrong_method_is_405_with_allow_and_an_unknown_route_404(engine_url: str) -> None:
    for operation, path, methods in routes():
        for method in set(METHODS) - methods - {"HEAD"}:
            answer = send(engine_url, method, path)
            assert_contract_error(answer, 405, f"{method} {path} ({operation})")
            assert set(answer.headers["Allow"].split(", ")) == methods, path
    for path in ("/v1/nowhere", "/v1/souls/pippa", "/v1//events", "/v1/events/", "/"):
        assert_contract_error(send(engine_url, "GET", path), 404, path)


def test_every_spoiled_body_is_400_naming_the_field_and_changes_nothing(engine_url: str) -> None:
    before = head_revision(engine_url)
    for operation, path, methods in routes():
        if operation not in BODIES:
            continue
        method = "PATCH" if "PATCH" in methods else "POST"
        extra = {"Idempotency-Key": "walk-event"} if operation == "postEvent" else {}
        for raw in (b"{nope", b"[1]", b'"text"', b"12", b'{"soul": "\xff"}', b"{}"):
            answer = send(engine_url, method, path, data=raw, headers=extra)
            assert_contract_error(answer, 400, f"{path} body {raw!r}")
        for field in BODIES[operation]:
            for name, value in SPOILED_VALUES.items():
                body = {**BODIES[operation], field: value}
                answer = send(engine_url, method, path, json=body, headers=extra)
                assert_contract_error(answer, 400, f"{path} {field}={name}")
                named = [d["field"] for d in answer.json()["error"].get("details", [])]
                assert not named or named[0].split(".")[0] == field, (path, field, named)
    viewer = {**BODIES["postEvent"]["conversation"], "viewer": "alice"}
    spoiled_event = {**BODIES["postEvent"], "conversation": viewer}
    extra = {"Idempotency-Key": "walk-event"}
    answer = send(engine_url, "POST", "/v1/events", json=spoiled_event, headers=extra)
    assert_contract_error(answer, 400, "a v1 viewer")
    assert answer.json()["error"]["details"][0]["field"] == "conversation.viewer"
    assert head_revision(engine_url) == before


def test_bad_limits_overflows_nul_and_surrogates_in_queries_and_paths_are_400(
    engine_url: str,
) -> None:
    for name, query in BAD_QUERIES.items():
        answer = send(engine_url, "GET", f"/v1/souls/pippa/items?{query}")
        assert_contract_error(answer, 400, name)
    for limit in (0, 101, 2**63, -(2**63) - 1, "5"):
        body = {**BODIES["recall"], "limit": limit}
        assert_contract_error(send(engine_url, "POST", "/v1/recall", json=body), 400, str(limit))
    for operation, path, methods in routes():
        for name, spoiled in BAD_PATH_TEXT.items():
            if "pippa" not in path:
                continue
            method = sorted(methods - {"HEAD"})[0]
            answer = send(engine_url, method, path.replace("pippa", spoiled))
            assert_contract_error(answer, 400, f"{operation} path {name}")
    past = "/v1/souls/pippa/blocks/r9223372036854775808"
    assert_contract_error(send(engine_url, "GET", past), 404, "a revision past 64 bits")
    bundle = {**BODIES["bundle"], "revision": "r9223372036854775808"}
    assert_contract_error(send(engine_url, "POST", "/v1/bundles", json=bundle), 404, "bundle")
    for revision in ("r1%00", "r%ED%A0%80", "nope!"):
        answer = send(engine_url, "GET", f"/v1/souls/pippa/blocks/{revision}")
        assert_contract_error(answer, 400, f"revision {revision}")


def test_a_body_over_the_cap_is_413_unread_and_a_long_url_414(engine_url: str) -> None:
    huge = b"[" + b"1," * (MAX_BODY_BYTES // 2) + b"1]"
    for operation, path, methods in routes():
        if operation in BODIES:
            method = "PATCH" if "PATCH" in methods else "POST"
            answer = send(engine_url, method, path, data=huge)
            assert_contract_error(answer, 413, f"{path} huge body")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert_contract_error(send(engine_url, "POST", "/v1/recall", data=deep), 400, "100,000 deep")
    long_query = "q=" + "a" * MAX_URL_BYTES
    answer = send(engine_url, "GET", f"/v1/souls/pippa/items?{long_query}")
    assert_contract_error(answer, 414, "a long URL")
    assert head_revision(engine_url).startswith("r")


def test_the_control_door_asks_for_the_token_and_never_shows_it(engine_url: str) -> None:
    head_revision(engine_url)  # one contract call, with the token, for the log
    no_token = requests.get(engine_url + "/_control/requests", timeout=10)
    assert_contract_error(no_token, 401, "the door without a token")
    wrong = {"Authorization": "Bearer not-the-token"}
    assert_contract_error(send(engine_url, "GET", "/_control/requests", headers=wrong), 401, "")
    assert_contract_error(send(engine_url, "POST", "/_control/faults", json=[1]), 400, "a list")
    listed = send(engine_url, "GET", "/_control/requests").json()["requests"]
    assert listed, "the contract calls above are logged"
    shown = {r["headers"].get("Authorization") for r in listed}
    assert "[redacted]" in shown
    assert shown <= {"[redacted]", None}  # the start-up probe sent none
    assert "engine-test-token" not in json.dumps(listed)


def test_the_request_id_is_taken_when_sane_and_made_otherwise(engine_url: str) -> None:
    given = send(engine_url, "GET", "/v1/souls/pippa/head", headers={"X-Request-Id": "abc-123"})
    assert given.headers["X-Request-Id"] == "abc-123"
    for insane in ("", "a b", "x" * 200, "a/b"):
        made = send(engine_url, "GET", "/v1/nowhere", headers={"X-Request-Id": insane})
        assert made.headers["X-Request-Id"] not in ("", insane)
        assert len(made.headers["X-Request-Id"]) == 32
