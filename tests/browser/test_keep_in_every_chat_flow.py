"""A member reads on "What Pippa remembers" how many memories Pippa keeps and how many a new chat
carries, marks an old memory of hers *keep in every chat*, sees it tagged as carried, and unmarks
it, on a phone's width and a desktop's. Against a stand-in engine over real HTTP that speaks
contract version 3's ``keep`` and ``left_out`` (``tests/support/keeping_engine.py``)."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.engine_token import TOKEN
from tests.support.keeping_engine import KeepingEngine, serving

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OLDEST = "Grandma's birthday is the ninth of May."


@pytest.fixture
def keeping(configure: Any) -> Iterator[KeepingEngine]:
    yield from serving(KeepingEngine(token=TOKEN, holds=2), configure)


@pytest.mark.parametrize("width", [390, 1280])
def test_a_member_keeps_an_old_memory_in_every_chat_and_sees_it_carried(
    live_server: Any,
    page: Page,
    user: Any,
    make_user: Any,
    soul: Any,
    keeping: KeepingEngine,
    width: int,
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    bob = make_user("bob")
    oldest = keeping.add(OLDEST, by=user)
    for text in ["The bins go out on Tuesday.", "The boiler code is 4471.", "Bob likes jazz."]:
        keeping.add(text, by=bob)
    log_in(page, live_server.url, "alice")

    page.get_by_role("link", name="Memory").click()
    counts = page.locator("#memory-counts")
    expect(counts).to_contain_text("Pippa keeps 4 memories you can see.")
    expect(counts).to_contain_text("A chat you begin now carries 2 of them")
    entry = page.locator(f"#item-{oldest}")
    expect(entry).not_to_contain_text("In new chats")
    entry.get_by_role("button", name="Keep in every chat").click()

    expect(page.get_by_role("status").first).to_contain_text("Kept in every chat")
    entry = page.locator(f"#item-{oldest}")
    expect(entry.locator(".mark.kept")).to_have_text("Kept in every chat")
    expect(entry.locator(".mark.carried")).to_have_text("In new chats")
    expect(page.locator("#memory-counts")).to_contain_text("carries 2 of them")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"keep-{width}.png"), full_page=True)
    fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits, f"the page scrolls sideways at {width} px"

    entry.get_by_role("button", name="Stop keeping in every chat").click()

    expect(page.get_by_role("status").first).to_contain_text("No longer kept in every chat")
    expect(page.locator(f"#item-{oldest}")).not_to_contain_text("Kept in every chat")
    expect(page.locator(f"#item-{oldest}")).not_to_contain_text("In new chats")
    assert [r["body"]["keep"] for r in keeping.received if r["method"] == "PATCH"] == [True, False]
