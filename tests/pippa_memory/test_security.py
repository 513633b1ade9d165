"""Security promises across the whole app: everything behind login but the brain door (behind its
signature), CSRF on every unsafe call, the admin for staff only, and no secret in any log line,
page or error body over a full session."""

import json
import logging
from typing import Any

import pytest
import responses
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from provider_doubles import AnthropicKit
from reference_engine.server import ReferenceEngine
from tests.support.brain_door import BRAIN_SECRET, claude_vessel
from webui.models import Conversation, Soul, Vessel

pytestmark = pytest.mark.django_db

PROVIDER_KEY = "sk-ant-PROVIDER-SECRET-0123456789"
ENGINE_TOKEN = "engine-TOKEN-SECRET-0123456789"
SECRETS = [PROVIDER_KEY, ENGINE_TOKEN, BRAIN_SECRET, BRAIN_SECRET.removeprefix("whsec_")]


def all_routes() -> list[str]:
    """Every URL pattern of the project outside the admin, as a path with sample arguments."""
    samples = {"conversation_id": "00000000-0000-4000-8000-000000000000", "slug": "offline"}
    found = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                if route.startswith("admin/"):
                    continue
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                for name, value in samples.items():
                    route = route.replace(f"<uuid:{name}>", value).replace(f"<slug:{name}>", value)
                found.append("/" + route.lstrip("^").rstrip("$"))

    walk(get_resolver().url_patterns, "")
    return found


OPEN = {"/accounts/login/"}
SIGNED = {"/api/memory/brain/"}
ICON = {"/favicon.ico"}
"""Asked for by browsers before any login: sent to the site's icon, a static file."""
HEALTH = {"/health/"}
"""A load balancer's check: open to anyone, and says only ``ok`` or ``unavailable``."""


@pytest.mark.parametrize("path", all_routes())
def test_every_page_and_api_needs_a_login_except_the_brain_door(
    path: str, soul: Soul, offline_vessel: Vessel
) -> None:
    client = Client()
    get = client.get(path)
    post = client.post(path, {})
    if path in OPEN:
        assert get.status_code == 200
        return
    if path in SIGNED:
        assert post.status_code in (401, 415, 503)
        return
    if path in HEALTH:
        assert (get.status_code, get.content) in ((200, b"ok\n"), (503, b"unavailable\n"))
        return
    if path in ICON:
        assert (get.status_code, get["Location"]) == (302, "/static/webui/favicon.svg")
        assert post.status_code == 405
        return
    for response in (get, post):
        assert response.status_code in (302, 401, 403, 405), (path, response.status_code)
        if response.status_code == 302:
            assert "/login/" in response["Location"]


@pytest.mark.parametrize("path", [p for p in all_routes() if p not in OPEN | SIGNED])
def test_every_unsafe_call_needs_the_csrf_token(
    path: str, user: Any, soul: Soul, offline_vessel: Vessel
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    response = client.post(path, {"text": "x"})

    assert response.status_code in (403, 405), (path, response.status_code)


def test_logout_needs_the_csrf_token_too(user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    assert client.post("/accounts/logout/").status_code == 403


def test_the_admin_is_staff_only(user: Any) -> None:
    client = Client()
    client.force_login(user)

    for path in ("/admin/", "/admin/webui/vessel/", "/admin/pippa_memory/braincall/"):
        response = client.get(path)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


def test_no_secret_reaches_a_log_line_a_page_or_an_error_body(
    engine: ReferenceEngine,
    configure: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: Any,
    make_user: Any,
    soul: Soul,
    offline_vessel: Vessel,
) -> None:
    from standardwebhooks import Webhook

    configure(URL=engine.url, TOKEN=ENGINE_TOKEN, BRAIN_SECRET=BRAIN_SECRET, BRAIN_RATE="1000/min")
    engine.token = ENGINE_TOKEN
    monkeypatch.setenv("HOUSEHOLD_ANTHROPIC_KEY", PROVIDER_KEY)
    claude = claude_vessel("HOUSEHOLD_ANTHROPIC_KEY", brain_priority=1)
    staff = Client()
    staff.force_login(make_user("root", is_staff=True, is_superuser=True))
    written: list[str] = []

    def keep(response: Any) -> Any:
        written.append(response.content.decode("utf-8", "replace"))
        written.append(json.dumps(dict(response.items())))
        return response

    kit = AnthropicKit()
    with (
        caplog.at_level(logging.DEBUG),
        responses.RequestsMock(assert_all_requests_are_fired=False) as rsps,
    ):
        rsps.add_passthru(engine.url)
        status, body, _ = kit.error("auth_failed")
        kit.queue(rsps, status, body)
        kit.queue(rsps, 200, kit.text_body("Hello from Claude"))
        kit.queue(rsps, 200, kit.text_body("ok"))
        for vessel in ("offline", "claude"):
            created = keep(
                staff.post(
                    "/api/conversations/",
                    {"soul": "pippa", "vessel": vessel},
                    content_type="application/json",
                )
            ).json()
            url = f"/api/conversations/{created['id']}/messages/"
            for text in ("hello", "remember the code", "recall code", "ask anything"):
                keep(staff.post(url, {"text": text}, content_type="application/json"))
            keep(staff.get(f"/conversations/{created['id']}/"))
        keep(staff.post("/vessels/claude/test/", follow=True))
        engine.set_fault("error", status=503)
        conversation = Conversation.objects.create(soul=soul, vessel=offline_vessel, viewer=None)
        keep(
            staff.post(
                f"/api/conversations/{created['id']}/messages/",
                {"text": "again"},
                content_type="application/json",
            )
        )
        engine.reset()
        raw = json.dumps(
            {"role": "decide", "soul": "pippa", "input": {"question": "q?", "options": ["a", "b"]}}
        )
        from datetime import UTC, datetime

        now = datetime.now(UTC)
        good = Webhook(BRAIN_SECRET).sign("msg_1", now, raw)
        for signature in (good, "v1,AAAA"):
            keep(
                Client().post(
                    "/api/memory/brain/",
                    raw,
                    content_type="application/json",
                    HTTP_WEBHOOK_ID="msg_1" if signature == good else "msg_2",
                    HTTP_WEBHOOK_TIMESTAMP=str(int(now.timestamp())),
                    HTTP_WEBHOOK_SIGNATURE=signature,
                )
            )
        for page in (
            "/",
            "/vessels/",
            "/stream/",
            "/admin/webui/vessel/",
            f"/admin/webui/vessel/{claude.pk}/change/",
            "/admin/pippa_memory/outboxevent/",
            "/admin/pippa_memory/braincall/",
            "/admin/pippa_memory/pinrecord/",
            "/api/schema/",
        ):
            keep(staff.get(page))
        assert conversation.pk

    everything = "\n".join(written) + "\n" + caplog.text
    assert "Hello from Claude" in everything  # the session really ran
    for secret in SECRETS:
        assert secret not in everything
    # The engine saw the token: it was sent, just never written anywhere.
    assert any(
        r["headers"].get("Authorization") == f"Bearer {ENGINE_TOKEN}" for r in engine.received
    )
