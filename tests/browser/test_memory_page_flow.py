"""A member opens "What Pippa remembers" from the navigation, forgets one of their memories
through the confirmation (which says what forgetting does and does not remove) and sees it gone,
on a phone's width and a desktop's."""

import os
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.household_memory import add_memory, head, said_in_chat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1280])
def test_a_member_forgets_a_memory_through_the_confirmation_and_sees_it_gone(
    live_server: Any, page: Page, user: Any, soul: Any, memory_on: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    item = add_memory(
        memory_on, "Alice hides the biscuits.", scope="private", by=user, source=said_in_chat()
    )
    add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    log_in(page, live_server.url, "alice")

    page.get_by_role("link", name="Memory").click()
    expect(page.get_by_role("heading", name="What Pippa remembers")).to_be_visible()
    entry = page.locator(f"#item-{item}")
    expect(entry).to_contain_text("You said it")
    expect(entry).to_contain_text("Private to you")
    entry.get_by_role("link", name="Forget: Alice hides the biscuits.").click()

    explained = page.locator("#forget-explained")
    expect(explained).to_contain_text("earlier messages of a conversation still show")
    expect(explained).to_contain_text("delete the conversation")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"forget-{width}.png"), full_page=True)
    page.get_by_role("button", name="Forget it").click()

    expect(page.get_by_role("status").first).to_contain_text("The memory is forgotten.")
    expect(page.locator(f"#item-{item}")).to_have_count(0)
    expect(page.locator("#memory-items")).to_contain_text("The bins go out on Tuesday.")
    assert item not in head(memory_on, viewer=user)["items"]
    fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits, f"the page scrolls sideways at {width} px"
