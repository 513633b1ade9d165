"""What the browser tests do on the site's pages with Playwright: log in, start a conversation with
the offline vessel, send a message and wait for its reply; and where they keep screenshots."""

import os

from playwright.sync_api import Page, expect

from tests.support.factory_defaults import PASSWORD

#: A folder to save screenshots in (``BROWSER_SCREENSHOTS``); none are taken without it.
SCREENSHOTS = os.environ.get("BROWSER_SCREENSHOTS")

#: A message whose offline reply is long enough to watch arrive piece by piece.
LONG = " ".join(f"word{n}" for n in range(25))
#: The text of the reply being written, once some has arrived (null until then).
WRITING_TEXT = """() => {
  const body = document.querySelector(".message.assistant.writing .content");
  return body && body.textContent.length > 0 ? body.textContent : null;
}"""


def log_in(page: Page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()


def start_conversation(page: Page, base_url: str) -> None:
    """A new conversation with Pippa on the offline vessel, opened on ``page``."""
    page.goto(f"{base_url}/conversations/new/")
    page.get_by_label("Talk with").select_option(label="Pippa")
    page.get_by_label("Model").select_option(label="Offline")
    page.get_by_role("button", name="Start").click()


def send(page: Page, text: str) -> None:
    """Send ``text`` on the open conversation and wait until its reply is done."""
    before = page.locator(".message.assistant").count()
    page.get_by_label("Message").fill(text)
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".message.assistant")).to_have_count(before + 1)
    # The reply's element comes with its first piece; the turn is over when Send is back.
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


def begin_a_long_reply(page: Page) -> str:
    """Send :data:`LONG` on the open conversation and wait until its reply begins to show (the
    offline vessel must be paced for that to be seen); the reply's text shown first."""
    page.get_by_label("Message").fill(LONG)
    page.get_by_role("button", name="Send").click()
    return page.wait_for_function(WRITING_TEXT).json_value()
