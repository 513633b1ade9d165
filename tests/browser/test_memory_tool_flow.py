"""A household member who may change vessels flips the memory tool for a vessel; new conversations then offer it or not,
and a recall that fell back is marked as a fallback on the page."""

import os
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in, send, start_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_flipping_the_switch_decides_the_tool_for_new_conversations(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Any, memory_on: Any
) -> None:
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")
    user.user_permissions.add(Permission.objects.get(codename="change_vessel"))
    log_in(page, live_server.url, "alice")

    page.goto(f"{live_server.url}/vessels/")
    row = page.locator("#vessel-offline")
    expect(row.locator(".state")).to_have_text("On")
    row.get_by_role("button", name="Turn the memory tool off for Offline").click()
    expect(page.locator("#vessel-offline .state")).to_have_text("Off")
    expect(page.get_by_role("status").first).to_contain_text("conversations started from now on")

    start_conversation(page, live_server.url)
    send(page, "remember I like tea")
    reply = page.locator(".message.assistant").last
    expect(reply).to_contain_text("no memory tool in this conversation")
    expect(reply.locator("details.tool-use")).to_have_count(0)

    page.goto(f"{live_server.url}/vessels/")
    page.get_by_role("button", name="Turn the memory tool on for Offline").click()
    expect(page.locator("#vessel-offline .state")).to_have_text("On")

    start_conversation(page, live_server.url)
    send(page, "recall submarine")
    tool_use = page.locator(".message.assistant").last.locator("details.tool-use")
    summary = tool_use.locator("summary").first
    expect(summary).to_contain_text("Pippa looked in her memory for “submarine”")
    expect(summary).to_contain_text("nothing matched")
    tool_use.locator("summary").first.click()
    expect(tool_use.locator(".fallback-note")).to_contain_text("not matches but a fallback")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "fallback.png"), full_page=True)


def test_with_memory_off_the_page_says_so_and_the_switches_are_disabled(
    live_server: Any, page: Page, user: Any, offline_vessel: Any, configure: Any
) -> None:
    configure(ENABLED=False)
    user.user_permissions.add(Permission.objects.get(codename="change_vessel"))
    log_in(page, live_server.url, "alice")

    page.goto(f"{live_server.url}/vessels/")

    expect(page.locator("#memory-notice")).to_contain_text(
        "Memory is switched off for this household"
    )
    expect(page.get_by_role("button", name="Turn the memory tool off for Offline")).to_be_disabled()
