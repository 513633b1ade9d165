"""The Soul Stream page in a browser: an account that may add unattended runs wakes a soul and sees its post, with the brief
its memory curated, above the scheduled job's earlier post."""

import os
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from playwright.sync_api import Page, expect

from webui.models import ScheduledJob
from webui.unattended import run_due_jobs

from .test_chat_flow import SCREENSHOTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_wake_a_soul_and_see_the_stream_newest_first(
    live_server: Any, page: Page, make_user: Any, soul: Any, offline_vessel: Any, memory_on: Any
) -> None:
    waker = make_user("root", is_staff=True)
    waker.user_permissions.add(Permission.objects.get(codename="add_unattendedrun"))
    memory_on.state.remember("pippa", "The garden needs water on Fridays.")
    ScheduledJob.objects.create(
        name="Morning note",
        soul=soul,
        vessel=offline_vessel,
        prompt="Write the morning note.",
        schedule="every 1h",
        next_run_at=timezone.now() - timedelta(seconds=1),
    )
    run_due_jobs()
    log_in(page, live_server.url, "root")

    page.get_by_role("link", name="Soul Stream").click()
    expect(page.locator(".post")).to_have_count(1)
    expect(page.locator(".post").first).to_contain_text("Scheduled job “Morning note”")
    expect(page.locator(".post").first.locator(".memory")).to_contain_text("with bundle r1")

    page.get_by_role("button", name="Wake now").click()

    expect(page.get_by_role("status").first).to_contain_text("Pippa woke and posted.")
    expect(page.locator(".post")).to_have_count(2)
    newest = page.locator(".post").first
    expect(newest).to_contain_text("Soul Stream wake")
    expect(newest.locator(".memory")).to_contain_text("with brief r1")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "stream.png"), full_page=True)
