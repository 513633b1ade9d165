"""A model's failure in a family's words (issue 38): every cause our vessel errors name reads as
a sentence a member can act on, starting with the model's name and saying their message is kept,
with none of the provider's detail (an address, a status, an exception's name), which stays in
the admin's log and on the vessel for the admin."""

import logging
from typing import Any

import pytest

from tests.support.vessels import home_server
from webui.models import Conversation
from webui.turns.events import TurnError
from webui.turns.service import run_turn
from webui.vessels.errors import VesselConfigurationError, VesselError
from webui.vessels.family_words import family_sentence

TECHNICAL = (
    "OpenAI-compatible server at http://127.0.0.1:9/v1 could not be reached (ConnectionError); "
    "HTTP 401 invalid_api_key"
)
CODES = [
    "connection_failed",
    "timeout",
    "connection_lost",
    "rate_limited",
    "overloaded",
    "server_error",
    "quota_exhausted",
    "request_too_large",
    "auth_failed",
    "forbidden",
    "not_found",
    "bad_request",
    "unexpected_redirect",
    "provider_error",
    "bad_response",
    "invalid_json",
    "no_answer",
    "response_too_large",
    "unencodable_text",
]


@pytest.mark.parametrize("code", CODES)
def test_every_cause_reads_in_family_words_without_the_providers_detail(code: str) -> None:
    sentence = family_sentence("Home server", VesselError(TECHNICAL, code=code))

    assert sentence.startswith("Home server ") or sentence.startswith("This chat ")
    assert "Your message is kept" in sentence
    for detail in ("127.0.0.1", "http", "ConnectionError", "401", "invalid_api_key", "OpenAI"):
        assert detail not in sentence


def test_the_home_server_that_cannot_be_reached_says_exactly_that() -> None:
    sentence = family_sentence("Home server", VesselError(TECHNICAL, code="connection_failed"))

    assert (
        sentence
        == "Home server could not be reached. Your message is kept: press Retry in a moment."
    )


def test_a_model_not_set_up_says_who_to_tell_and_not_the_keys_variable() -> None:
    error = VesselConfigurationError("needs an API key in HOUSEHOLD_KEY, which is not set")

    sentence = family_sentence("Claude", error)

    assert sentence.startswith("Claude is not set up right")
    assert "HOUSEHOLD_KEY" not in sentence


@pytest.mark.django_db
def test_a_turn_that_cannot_reach_the_server_logs_the_detail_for_the_admin(
    conversation: Conversation, caplog: pytest.LogCaptureFixture, soul: Any
) -> None:
    home = home_server()
    Conversation.objects.filter(pk=conversation.pk).update(vessel=home)

    with caplog.at_level(logging.WARNING), pytest.raises(TurnError) as failed:
        run_turn(conversation=Conversation.objects.get(pk=conversation.pk), text="hello?")

    assert failed.value.message == (
        "Home server could not be reached. Your message is kept: press Retry in a moment."
    )
    assert failed.value.details == {"vessel": "home", "retryable": True}
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "127.0.0.1:9" in logged, "the admin's log keeps what happened"
    home.refresh_from_db()
    assert "127.0.0.1:9" in home.last_problem
