"""A provider that quotes the key it received (``Bearer sk-…`` and the key itself) in its 401 puts
no key anywhere we show or log: not in the chat API's error body, not on the page, not in the log
(message, arguments or traceback). Every HTTP adapter, each provider's documented 401 shape."""

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import responses
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from provider_doubles import HTTP_KITS, Kit
from webui.models import Conversation, Soul, Vessel
from webui.prompt_types import Prompt
from webui.text.redaction import (
    MASK,
    mask_secrets,
    register_secret_source,
    unregister_secret_source,
)
from webui.vessels.errors import VesselError
from webui.vessels.registry import adapter_for

pytestmark = pytest.mark.django_db

# A value with no known shape: masked because a vessel's key variable holds it.
KEY_ENV = "KITCHEN_VESSEL_TOKEN"
KEY = "kitchen-7f3a9c2e1b5d8046aa91"
BEARER_SK = "Bearer sk-proj-Zx81LeakedByTheProvider42"
LEAKS = (KEY, BEARER_SK, "sk-proj-Zx81LeakedByTheProvider42")


def quoting_the_key(kit: Kit) -> tuple[int, Any]:
    """The kit's documented 401 body, its message replaced by one that quotes what it received."""
    status, body, _ = kit.error("auth_failed")
    original = kit.error_message(body)
    leaking = f"Incorrect API key provided: {KEY}. Header was 'Authorization: {BEARER_SK}'."

    def swap(value: Any) -> Any:
        if value == original:
            return leaking
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    return status, swap(body)


@pytest.fixture(params=HTTP_KITS, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


@pytest.fixture
def vessel(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> Vessel:
    monkeypatch.setenv(KEY_ENV, KEY)
    return Vessel.objects.create(
        slug="kitchen",
        name="Kitchen",
        adapter=kit.adapter,
        model=kit.model,
        base_url=kit.base_url,
        api_key_env=KEY_ENV,
        max_retries=0,
    )


@pytest.fixture
def leaking_provider(kit: Kit) -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as rsps:
        status, body = quoting_the_key(kit)
        kit.queue(rsps, status, body)
        yield rsps


def assert_no_key(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text


def test_a_401_quoting_the_key_leaves_no_key_in_the_api_body_or_the_log(
    vessel: Vessel,
    soul: Soul,
    user: Any,
    auth_client: APIClient,
    leaking_provider: responses.RequestsMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conversation = Conversation.objects.create(soul=soul, vessel=vessel, viewer=user)

    with caplog.at_level(logging.INFO):
        response = auth_client.post(
            f"/api/conversations/{conversation.id}/messages/", {"text": "hello"}, format="json"
        )

    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "auth_failed"
    # The member reads family words; the provider's own words, masked, go to the admin's log.
    assert "Incorrect API key" not in error["message"]
    assert_no_key(response.content.decode())
    assert "auth_failed" in caplog.text
    assert "HTTP 401: Incorrect API key provided: " + MASK in caplog.text
    assert f"Authorization: Bearer {MASK}" in caplog.text
    assert_no_key(caplog.text)
    assert_no_key(repr([(r.msg, r.args) for r in caplog.records]))


def test_a_401_quoting_the_key_leaves_no_key_on_the_page(
    vessel: Vessel, user: Any, auth_client: APIClient, leaking_provider: responses.RequestsMock
) -> None:
    # Test connection is for those who may change vessels.
    user.user_permissions.add(Permission.objects.get(codename="change_vessel"))
    page = auth_client.post(f"/vessels/{vessel.slug}/test/", follow=True).content.decode()

    assert "Kitchen failed:" in page
    assert "HTTP 401" in page
    assert_no_key(page)


def test_a_traceback_that_quotes_the_key_is_masked_in_the_log(
    vessel: Vessel, leaking_provider: responses.RequestsMock, caplog: pytest.LogCaptureFixture
) -> None:
    prompt = Prompt(
        conversation_id="c", system_sections=("s",), history=(), user_text="hi", user_message_id="m"
    )
    logger = logging.getLogger("webui.tests.masking")
    try:
        try:
            adapter_for(vessel).complete(prompt=prompt, tools=())
        except VesselError as error:
            raise RuntimeError(f"wrapped: {KEY} / {BEARER_SK}") from error
    except RuntimeError:
        logger.exception("The call failed for key %s", KEY)

    (record,) = [r for r in caplog.records if r.name == "webui.tests.masking"]
    assert record.getMessage() == f"The call failed for key {MASK}"
    assert "Traceback" in caplog.text
    assert "RuntimeError: wrapped: " + MASK in caplog.text
    assert_no_key(caplog.text)


@pytest.fixture
def registered_secret() -> Iterator[Callable[[], list[str]]]:
    def source() -> list[str]:
        return ["plug-in-signing-value-0042"]

    register_secret_source(source)
    yield source
    unregister_secret_source(source)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Authorization: Bearer abc.DEF-123_xyz", f"Authorization: Bearer {MASK}"),
        ("key sk-ant-api03-AbCdEf012345 refused", f"key {MASK} refused"),
        ("secret whsec_ZGVtby1icmFpbi1kb29y= refused", f"secret {MASK} refused"),
        ("the plug-in-signing-value-0042 leaked", f"the {MASK} leaked"),
        ("A valid bearer token is needed.", "A valid bearer token is needed."),
    ],
)
def test_secret_shapes_and_registered_values_are_masked_and_prose_is_not(
    registered_secret: Any, text: str, masked: str
) -> None:
    assert mask_secrets(text) == masked


def test_a_vessel_error_quoting_a_lone_surrogate_is_shown_with_a_replacement_character() -> None:
    error = VesselError("The provider said: \ud800!", code="bad_request", provider_code="x\udfff")

    assert error.message == "The provider said: \ufffd!"
    assert error.provider_code == "x\ufffd"
    error.message.encode("utf-8")
