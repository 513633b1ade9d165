"""The cache bill page in a browser: staff who may view the ledger reach it from the navigation
after real turns, see the vessel's cached share and a drift with its cause, and the page never
scrolls sideways, on a phone (390 px) or a desktop (1280 px)."""

import os
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from webui.models import Conversation, VesselCall
from webui.turns.service import run_turn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1280])
def test_staff_read_the_cache_bill_without_sideways_scrolling(
    live_server: Any, page: Page, make_user: Any, soul: Any, offline_vessel: Any, width: int
) -> None:
    keeper = make_user("keeper", is_staff=True)
    keeper.user_permissions.set(
        Permission.objects.filter(codename__in=["view_vesselcall", "view_conversation"])
    )
    chat = Conversation.objects.create(
        soul=soul,
        vessel=offline_vessel,
        viewer=make_user("alice"),
        title="A rather long conversation title about the weekend plans and the garden",
    )
    for text in ("hello", "recall tea", "how is the garden today?"):
        run_turn(conversation=chat, text=text)
    moved = VesselCall.objects.filter(conversation=chat).order_by("-id").first()
    moved.drift_section = "memory"
    moved.drift_cause = "repin: staff re-pinned after a correction to the household memory"
    moved.save(update_fields=["drift_section", "drift_cause"])
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "keeper")

    page.get_by_role("link", name="Cache").click()

    expect(page.get_by_role("heading", name="Cache bill")).to_be_visible()
    vessels = page.locator("#bill-vessels")
    expect(vessels).to_contain_text(offline_vessel.name)
    expect(vessels.locator(".drift-turns").first).to_have_text("1")
    drifts = page.locator("#bill-drifts")
    expect(drifts.locator(".drift-section")).to_have_text("memory")
    expect(drifts.locator(".drift-cause")).to_contain_text("staff re-pinned after a correction")
    # A conversation is named by soul, vessel and date there, never by its member's title.
    conversations = page.locator("#bill-conversations")
    expect(conversations).to_contain_text(f"{soul.name} via {offline_vessel.name}")
    expect(conversations).not_to_contain_text("A rather long conversation")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"cache-{width}.png"), full_page=True)
    fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits, f"the cache bill scrolls sideways at {width} px"
