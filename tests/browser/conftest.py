"""Playwright for Python driving Debian's Chromium (``/usr/bin/chromium``) against a live server.

In CI (``CI=true``) a missing browser fails the run; on a developer's machine it skips with the
command that installs it.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
# The flags this workplace's notes give for headless Chromium as root on a closed network.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: A phone's window and a desktop's, by name (width, height).
WINDOWS = {"phone": (390, 844), "desktop": (1280, 900)}

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still
# synchronous, so Django's async-safety guard must stand aside for these tests.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: apt-get install chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(f"Browser tests must run in CI: {message}")
        pytest.skip(message)
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait as long as actions do: a turn on a busy 2-core CI machine can take seconds.
    expect.set_options(timeout=15000)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        yield browser
        browser.close()


def page_in_a_window(browser: object, width: int, height: int) -> Iterator[object]:
    """A page of its own browser context, in a window of that size, until the test is done."""
    context = browser.new_context(viewport={"width": width, "height": height})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    yield from page_in_a_window(browser, 1100, 900)


@pytest.fixture(params=list(WINDOWS), ids=list(WINDOWS))
def phone_or_desktop_page(request: pytest.FixtureRequest, browser: object) -> Iterator[object]:
    """A page in a phone's window, then in a desktop's: a test module that takes it as its
    ``page`` runs each of its tests at both."""
    yield from page_in_a_window(browser, *WINDOWS[request.param])


@pytest.fixture
def slow_offline_vessel(settings: Any) -> None:
    """The offline vessel waits between the pieces of its reply, so a reader can watch it arrive."""
    settings.WEBUI = {"OFFLINE_PACE_SECONDS": 0.15}
