"""A household member logs in, starts a conversation, sends a message, and sees the reply and its
tool uses, in a real browser against a live server."""

import os
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from webui.models import Message

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_member_chats_with_the_offline_vessel_and_sees_its_tool_uses(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Any
) -> None:
    log_in(page, live_server.url, "alice")

    page.get_by_role("link", name="Start a new conversation").click()
    page.get_by_label("Talk with").select_option(label="Pippa")
    page.get_by_label("Model").select_option(label="Offline")
    page.get_by_role("button", name="Start").click()

    page.get_by_label("Message").fill("hello Pippa")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".message.assistant").first).to_contain_text("I heard: “hello Pippa”")

    page.get_by_label("Message").fill("remember I like tea")
    page.get_by_role("button", name="Send").click()
    reply = page.locator(".message.assistant").nth(1)
    expect(reply.locator(".content")).to_have_text("I'll remember that for you: “I like tea”.")
    tool_use = reply.locator("details.tool-use")
    expect(tool_use.locator("summary").first).to_have_text("Pippa noted “I like tea” to remember.")
    expect(tool_use.locator("pre").first).not_to_be_visible()
    # The raw call is one click further than the sentence.
    tool_use.locator("summary").first.click()
    expect(tool_use.locator("pre").first).not_to_be_visible()
    tool_use.get_by_text("The raw call").click()
    expect(tool_use.locator("pre").first).to_contain_text('"text": "I like tea"')
    expect(tool_use.locator("pre").nth(1)).to_contain_text("noted")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "chat.png"), full_page=True)

    # What the page showed is what was stored.
    assert Message.objects.filter(role="assistant").count() == 2
    stored = Message.objects.filter(role="assistant").order_by("sequence").last()
    assert stored.tool_uses[0]["input"] == {"verb": "remember", "text": "I like tea"}

    # A reload renders the same history from the server.
    page.reload()
    expect(page.locator(".message")).to_have_count(4)
    expect(page.locator(".message.assistant details.tool-use")).to_have_count(1)
