"""The Soul Stream page in a browser, on a phone's width and a desktop's: an account that may add
unattended runs wakes a soul and sees its post above the scheduled job's earlier one, each told in
the household's words (who wrote, when, whether memory was there), with the records behind them
(brief and bundle revisions, hashes) left to the admin."""

import os
import re
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.jobs import due_job
from tests.support.layout import WIDTHS, assert_fits
from webui.unattended.runner import run_due_jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", WIDTHS)
def test_staff_wake_a_soul_and_see_the_stream_newest_first_in_family_words(
    live_server: Any,
    page: Page,
    make_user: Any,
    soul: Any,
    offline_vessel: Any,
    memory_on: Any,
    width: int,
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    waker = make_user("root", is_staff=True)
    waker.user_permissions.add(Permission.objects.get(codename="add_unattendedrun"))
    memory_on.state.remember("pippa", "The garden needs water on Fridays.")
    due_job(soul, offline_vessel)
    run_due_jobs()
    log_in(page, live_server.url, "root")

    page.get_by_role("link", name="Soul Stream").click()
    expect(page.locator(".post")).to_have_count(1)
    job_post = page.locator(".post").first
    expect(job_post).to_contain_text(re.compile(r"Pippa wrote “Morning note” at \d\d:\d\d:"))
    remembered = "Pippa had the household's memories in mind."
    expect(job_post.locator(".memory")).to_have_text(remembered)

    page.get_by_role("button", name="Wake now").click()

    expect(page.get_by_role("status").first).to_contain_text("Pippa woke and posted.")
    expect(page.locator(".post")).to_have_count(2)
    newest = page.locator(".post").first
    expect(newest).to_contain_text(re.compile(r"Pippa woke at \d\d:\d\d and wrote:"))
    expect(newest.locator(".memory")).to_have_text(remembered)
    # The database's words stay in the admin.
    for record in ("brief", "bundle", "sha256", "r1", "Soul Stream wake", "Scheduled job"):
        expect(page.locator("ol.stream")).not_to_contain_text(record)
    assert_fits(page, "the Soul Stream")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"stream-{width}.png"), full_page=True)
