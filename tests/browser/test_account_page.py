"""A member's own account page in a real browser at a phone's width (390 px) and a desktop's
(1280 px): they set the name they go by, their default model and their time zone, change their
password through Django's own views, and log in with it; a mistake is said on the page and
changes nothing. Every form carries the site's CSRF token."""

import os
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.factory_defaults import PASSWORD
from tests.support.layout import assert_fits
from webui.models import MemberSettings, Vessel

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_PASSWORD = "a-new-household-password-77"


@pytest.fixture
def page(phone_or_desktop_page: Page) -> Page:
    """Every test here runs at a phone's width, then at a desktop's."""
    return phone_or_desktop_page


def shot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        width = page.viewport_size["width"]
        page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}-{width}.png"), full_page=True)


def test_a_member_sets_their_account_and_changes_their_password(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Vessel
) -> None:
    Vessel.objects.filter(pk=offline_vessel.pk).update(household_default=True)
    home = Vessel.objects.create(slug="home", name="Home", adapter="offline", model="home-1")
    log_in(page, live_server.url, "alice")
    page.get_by_role("link", name="Account").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    assert page.locator("#account-form input[name=csrfmiddlewaretoken]").count() == 1
    expect(page.get_by_label("Default model")).to_contain_text("The household's (Offline)")

    zones = page.get_by_label("Time zone")
    expect(zones).to_have_value("")  # the household's, until they choose
    expect(zones.locator("option[value='Mars/Olympus']")).to_have_count(0)
    page.get_by_label("Display name").fill("Mum\u202e")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("Not saved")
    expect(page.locator("#account-form")).to_contain_text("cannot hold control characters")
    assert not MemberSettings.objects.exists()

    page.get_by_label("Display name").fill("Mum")
    page.get_by_label("Default model").select_option(label="Home")
    page.get_by_label("Time zone").select_option("Pacific/Kiritimati")
    page.get_by_role("button", name="Save").click()

    expect(page.get_by_role("status")).to_contain_text("Your account is saved.")
    expect(page.get_by_label("Display name")).to_have_value("Mum")
    assert_fits(page, "the account page")
    shot(page, "account")
    kept = MemberSettings.objects.get(user=user)
    assert (kept.default_vessel, kept.time_zone) == (home, "Pacific/Kiritimati")
    page.goto(f"{live_server.url}/conversations/new/")
    expect(page.get_by_label("Model")).to_have_value(str(home.pk))

    page.goto(f"{live_server.url}/accounts/")
    page.get_by_role("link", name="Change your password").click()
    expect(page.get_by_role("heading", name="Change your password")).to_be_visible()
    page.get_by_label("Old password").fill("not my password")
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("alert")).to_contain_text("Not changed")
    assert_fits(page, "the password page with its error")
    shot(page, "password-error")
    page.get_by_label("Old password").fill(PASSWORD)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()

    expect(page.get_by_role("status")).to_contain_text("Your password is changed.")
    assert get_user_model().objects.get(pk=user.pk).check_password(NEW_PASSWORD)
    page.get_by_role("button", name="Log out").click()
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
