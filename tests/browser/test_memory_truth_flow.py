"""A member keeps memory true from the memory page (issue 36): adds a memory, adds the same words
again (still one), corrects one (the old one shows under the new, replaced on the day, with a
way to restore it), restores it, and reads that forgetting the newer does not bring the older
back; on a phone's width and a desktop's."""

import os
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.household_memory import head

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"


def add(page: Page, text: str) -> None:
    form = page.locator("#memory-add")
    form.get_by_label("Add a memory").fill(text)
    form.get_by_label("Household: everyone").check()
    form.get_by_role("button", name="Remember it").click()


@pytest.mark.parametrize("width", [390, 1280])
def test_a_member_adds_corrects_and_restores_a_memory_on_the_page(
    live_server: Any, page: Page, user: Any, soul: Any, memory_on: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "alice")
    page.get_by_role("link", name="Memory").click()

    add(page, LUND)
    expect(page.get_by_role("status").first).to_contain_text(f"Pippa remembers “{LUND}”")
    add(page, "I like tea")
    add(page, "i like TEA.")
    expect(page.locator("#memory-items > li")).to_have_count(2)  # the same words: one memory

    lund = next(m.id for m in memory_on.state.souls["pippa"].memories if m.text == LUND)
    entry = page.locator(f"#item-{lund}")
    entry.get_by_text("Correct…").click()
    entry.get_by_label("New words").fill(BERG)
    entry.get_by_role("button", name="Replace with these words").click()

    expect(page.get_by_role("status").first).to_contain_text(f"“{BERG}” replaces “{LUND}”")
    replaced = page.locator(f"#replaced-{lund}")
    expect(replaced).to_contain_text(f"Replaced “{LUND}” on")
    expect(page.locator("#memory-replacing")).to_contain_text(
        "Forgetting the newer memory does not bring the older one back"
    )
    block = head(memory_on, viewer=user)["block"]
    assert BERG in block
    assert LUND not in block
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"replaced-{width}.png"), full_page=True)
    fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits, f"the page scrolls sideways at {width} px"

    replaced.get_by_role("button", name=f"Restore: {LUND}").click()

    expect(page.get_by_role("status").first).to_contain_text(f"Restored: “{LUND}”")
    expect(page.locator(f"#item-{lund}")).to_contain_text(LUND)
    assert LUND in head(memory_on, viewer=user)["block"]
