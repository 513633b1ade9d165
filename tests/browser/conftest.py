"""Playwright for Python driving Debian's Chromium (``/usr/bin/chromium``) against a live server.

In CI (``CI=true``) a missing browser fails the run; on a developer's machine it skips with the
command that installs it.
"""

import os
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()
