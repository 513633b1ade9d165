"""A model that fails, as a member meets it at a phone's width (390 px) and a desktop's
(1280 px): the error reads in a family's words ("Home server could not be reached", never an
address or an exception's name), it never covers the message it is about (the page scrolls so
both show), and the member moves the chat to another model and has their message answered there.

The failing model is a real server that is not there: an OpenAI-compatible vessel at a closed
port, so the refusal comes over a socket as it would at home."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_chat_flow import log_in
from tests.support.layout import assert_fits, box_of
from webui.models import Conversation, Message, Vessel, VesselCall, VesselMove

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("BROWSER_SCREENSHOTS")
WIDTHS = {"phone": (390, 844), "desktop": (1280, 900)}


@pytest.fixture(params=list(WIDTHS), ids=list(WIDTHS))
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Page]:
    width, height = WIDTHS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.fixture
def home_server(db: None) -> Vessel:
    """A household's own model server that is down: nothing listens on port 9."""
    return Vessel.objects.create(
        slug="home",
        name="Home server",
        adapter=Vessel.Adapter.OPENAI_COMPATIBLE,
        model="llama",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        connect_timeout=0.5,
    )


def long_chat(user: Any, soul: Any, vessel: Vessel) -> Conversation:
    """A chat with enough turns that its newest message sits at the composer."""
    conversation = Conversation.objects.create(soul=soul, vessel=vessel, viewer=user, title="Long")
    for turn in range(12):
        asked = Message.objects.create(
            conversation=conversation, role="user", content=f"Question {turn} about the garden?"
        )
        Message.objects.create(
            conversation=conversation,
            role="assistant",
            content=f"Answer {turn}: water the tomatoes.\n" * 3,
            reply_to=asked,
        )
    return conversation


def test_a_model_error_reads_in_family_words_and_never_covers_the_message(
    live_server: Any, page: Page, user: Any, soul: Any, home_server: Vessel, offline_vessel: Any
) -> None:
    conversation = long_chat(user, soul, home_server)
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}{conversation.get_absolute_url()}")
    box = page.get_by_label("Message")
    box.fill("Are you there? " * 8)
    box.press("Enter")

    error = page.locator("#chat-error")
    expect(error).to_contain_text(
        "Home server could not be reached. Your message is kept: press Retry in a moment."
    )
    for detail in ("127.0.0.1", "ConnectionError", "OpenAI", "http"):
        expect(error).not_to_contain_text(detail)
    failed = page.locator(".message.user").last
    expect(failed).to_contain_text("Are you there?")
    page.wait_for_timeout(300)  # the scroll that follows the error's showing
    message, composer = box_of(failed), box_of(page.locator("#send"))
    assert message["y"] >= 0, "the failed message is above the window"
    assert message["y"] + message["height"] <= composer["y"] + 1, (
        f"the composer (top {composer['y']}) covers the failed message "
        f"(bottom {message['y'] + message['height']})"
    )
    assert_fits(page, "the chat with a model error")
    if SCREENSHOTS:
        width = page.viewport_size["width"]
        page.screenshot(path=os.path.join(SCREENSHOTS, f"model-error-{width}.png"))
    home_server.refresh_from_db()
    assert home_server.last_outcome == Vessel.Outcome.FAILED
    assert "ConnectionError" in home_server.last_problem or "connect" in home_server.last_problem


def test_a_member_moves_a_chat_to_another_model_and_retry_answers_there(
    live_server: Any, page: Page, user: Any, soul: Any, home_server: Vessel, offline_vessel: Any
) -> None:
    conversation = Conversation.objects.create(soul=soul, vessel=offline_vessel, viewer=user)
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}{conversation.get_absolute_url()}")
    page.get_by_label("Message").fill("hello")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".message.assistant:not(.writing)")).to_have_count(1)
    # The household's own server is switched off now: the chat cannot be answered there.
    Conversation.objects.filter(pk=conversation.pk).update(vessel=home_server)
    Vessel.objects.filter(pk=home_server.pk).update(enabled=False)
    page.reload()
    expect(page.locator("#vessel-switched-off")).to_contain_text(
        "Home server is switched off, so this chat cannot be answered there: move it to "
        "another model to carry on."
    )
    move = page.locator("#conversation-move")
    expect(move).to_have_attribute("open", "")
    move.get_by_label("Model").select_option(label="Offline")
    move.get_by_role("button", name="Move").click()

    expect(page.get_by_role("status").first).to_contain_text("This chat is now on Offline")
    expect(page.locator("#conversation-model")).to_contain_text("on the model Offline")
    assert_fits(page, "the chat just moved to another model")
    if SCREENSHOTS:
        width = page.viewport_size["width"]
        page.screenshot(path=os.path.join(SCREENSHOTS, f"moved-{width}.png"))
    page.get_by_label("Message").fill("and now?")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".message.assistant:not(.writing)")).to_have_count(2)

    move_row = VesselMove.objects.get()
    assert (move_row.from_vessel, move_row.to_vessel, move_row.moved_by) == (
        home_server,
        offline_vessel,
        user,
    )
    last = VesselCall.objects.filter(conversation=conversation).order_by("-id").first()
    assert last.vessel == offline_vessel
