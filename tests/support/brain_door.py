"""Calling the brain door (``/api/memory/brain/``) as the engine calls it: its secrets, a decide
input, Standard Webhooks signatures on a body (for Django's test client, or for a ``requests``
session), and a provider vessel for it to judge with."""

import base64
import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import requests
from django.test import Client
from standardwebhooks import Webhook

from provider_doubles import AnthropicKit
from webui.models import Vessel

#: The door's two rotated secrets: the one the engine signs with, and the one before it.
OLD_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()
NEW_SECRET = "whsec_" + base64.b64encode(b"n" * 32).decode()
#: A door secret whose bytes say SECRET, for the tests that look for it where it must never be.
BRAIN_SECRET = "whsec_" + base64.b64encode(b"brain-door-SECRET-bytes-0123456").decode()
URL = "/api/memory/brain/"

DECIDE = {"question": "Tea or coffee for the guests?", "options": ["tea", "coffee"]}
#: A decide answer that fits the schema and every meaning rule.
GOOD = {"choice": "tea", "confidence": 0.9, "reason": "Everyone likes tea."}


def signed_headers(
    raw: bytes, *, secret: str = NEW_SECRET, webhook_id: str | None = None, at: float | None = None
) -> dict[str, str]:
    """The webhook headers for ``raw``, as Django's test client takes them."""
    webhook_id = webhook_id or f"msg_{uuid.uuid4().hex}"
    when = datetime.fromtimestamp(at if at is not None else time.time(), tz=UTC)
    signature = Webhook(secret).sign(webhook_id, when, raw.decode())
    return {
        "HTTP_WEBHOOK_ID": webhook_id,
        "HTTP_WEBHOOK_TIMESTAMP": str(int(when.timestamp())),
        "HTTP_WEBHOOK_SIGNATURE": signature,
    }


def call_door(body: Any, *, raw: bytes | None = None, **sign: Any) -> Any:
    """POST ``body`` (or ``raw`` bytes) to the door, signed; ``sign`` as :func:`signed_headers`."""
    raw = raw if raw is not None else json.dumps(body).encode()
    headers = signed_headers(raw, **sign)
    return Client().post(URL, raw, content_type="application/json", **headers)


def answer_with(rsps: Any, *texts: str) -> None:
    """Queue one Anthropic answer for each of ``texts``, in order."""
    kit = AnthropicKit()
    for text in texts:
        kit.queue(rsps, 200, kit.text_body(text))


def claude_vessel(api_key_env: str, *, brain_priority: int) -> Vessel:
    """An Anthropic vessel the door may judge with, its key in ``api_key_env``, never retrying."""
    return Vessel.objects.create(
        slug="claude",
        name="Claude",
        adapter="anthropic",
        model="claude-sonnet-4-5",
        api_key_env=api_key_env,
        brain_priority=brain_priority,
        max_retries=0,
    )


class SignLikeTheEngine(requests.auth.AuthBase):
    """Signs each request's body with the door's secret, as the engine would: a fresh webhook-id
    and the current time for every call.

    A header schemathesis left out (a negative case) stays out, so the door must refuse it.
    """

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        webhook_id = request.headers.get("webhook-id")
        if "webhook-signature" not in request.headers or not webhook_id:
            return request
        body = request.body or b""
        raw = body if isinstance(body, bytes) else body.encode()
        try:
            text = raw.decode()
            webhook_id.encode("ascii")
        except (UnicodeError, AttributeError):
            return request
        now = datetime.fromtimestamp(time.time(), tz=UTC)
        webhook_id = f"msg_{uuid.uuid4().hex}"
        request.headers["webhook-id"] = webhook_id
        if "webhook-timestamp" in request.headers:
            request.headers["webhook-timestamp"] = str(int(now.timestamp()))
        request.headers["webhook-signature"] = Webhook(NEW_SECRET).sign(webhook_id, now, text)
        return request
