"""Issue 14's whole promise in a real browser, as two household members: Alice's private
``remember`` never shows in Bob's conversations, recall or memory page; a household fact reaches
both; Alice forgets hers on her page, and her open conversation's next turn no longer carries it
(its pin history says ``forgotten``)."""

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from pippa_memory.models import PinRecord
from tests.support.browser_pages import log_in, send, start_conversation
from tests.support.outbox_delivery import deliver_all
from tests.support.pinned_blocks import pinned_block_text
from webui.models import Conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRIVATE = "Alice is planning a surprise party for Bob"
SHARED = "the bins go out on Tuesday"


def new_page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    page.set_default_timeout(15000)
    return page


def said(page: Page, text: str) -> None:
    """Send ``text`` on the open conversation and let the outbox deliver its turn event."""
    send(page, text)
    deliver_all()


def test_a_private_memory_stays_with_its_member_until_she_forgets_it(
    live_server: Any,
    browser: Browser,
    make_user: Any,
    user: Any,
    soul: Any,
    offline_vessel: Any,
    memory_on: Any,
) -> None:
    make_user("bob")
    alice, bob = new_page(browser), new_page(browser)
    log_in(alice, live_server.url, "alice")
    log_in(bob, live_server.url, "bob")

    start_conversation(alice, live_server.url)
    said(alice, f"remember {PRIVATE}")
    said(alice, f"remember for everyone {SHARED}")

    # A conversation Alice opens now pins a block holding both.
    start_conversation(alice, live_server.url)
    said(alice, "hello again")
    open_conversation = Conversation.objects.filter(viewer=user).order_by("-created_at").first()
    assert PRIVATE in pinned_block_text(open_conversation)

    # Bob: neither his recall nor his memory page shows Alice's private memory; the shared one is there.
    start_conversation(bob, live_server.url)
    said(bob, "recall party")
    said(bob, "recall bins")
    expect(bob.locator("#chat")).not_to_contain_text("surprise party")
    expect(bob.locator(".message.assistant").last).to_contain_text(SHARED)
    bob.goto(f"{live_server.url}/memory/")
    expect(bob.locator("#memory-items")).to_contain_text(SHARED)
    expect(bob.locator("body")).not_to_contain_text("surprise party")
    bobs = Conversation.objects.get(viewer__username="bob")
    assert "surprise party" not in pinned_block_text(bobs)

    # Alice forgets it on her page.
    alice.goto(f"{live_server.url}/memory/")
    expect(alice.locator("#memory-items")).to_contain_text(PRIVATE)
    alice.get_by_role("link", name=f"Forget: {PRIVATE}").click()
    alice.get_by_role("button", name="Forget it").click()
    expect(alice.get_by_role("status").first).to_contain_text("The memory is forgotten.")
    expect(alice.locator("#memory-items")).not_to_contain_text("surprise party")
    expect(alice.locator("#memory-items")).to_contain_text(SHARED)

    # Her open conversation's next turn re-pins without it, and its pin history says why.
    alice.goto(f"{live_server.url}/conversations/{open_conversation.pk}/")
    said(alice, "what do you remember?")
    assert "surprise party" not in pinned_block_text(open_conversation)
    assert SHARED in pinned_block_text(open_conversation)
    reasons = PinRecord.objects.filter(conversation=open_conversation).values_list(
        "reason", flat=True
    )
    assert "forgotten" in reasons
