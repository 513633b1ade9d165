"""Logged in stays logged in (issue 38, point 3): the demo member logs in to a household's
``make run`` in Chromium; ``make run`` is stopped and started again (``load_demo`` runs again,
as at every start); the same browser is still logged in, on the page it had open."""

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.households import (
    checkout_copy,
    household_database,
    make_run,
    wait_until_serving,
)
from tests.support.live_servers import free_port

# Two starts of a whole household: one worker, apart from the other servers' tests.
pytestmark = pytest.mark.xdist_group("production_server")
START_SECONDS = 120


def test_a_restart_of_make_run_keeps_the_demo_member_logged_in(page: Any, tmp_path: Path) -> None:
    folder = checkout_copy(tmp_path / "household")
    port, engine_port = free_port(), free_port()
    site, log = f"http://127.0.0.1:{port}", tmp_path / "make-run.log"
    with household_database("restart_keeps_login") as database:
        running = {"port": port, "engine_port": engine_port, "database": database, "log": log}
        with make_run(folder, **running):
            wait_until_serving(site, seconds=START_SECONDS, log=log)
            page.goto(f"{site}/accounts/login/")
            page.fill("input[name=username]", "demo")
            page.fill("input[name=password]", (folder / ".demo-login").read_text().strip())
            page.click("button[type=submit]")
            expect(page.get_by_role("button", name="Log out demo")).to_be_visible()
            page.goto(f"{site}/stream/")

        with make_run(folder, **running):  # the next `make run`
            wait_until_serving(site, seconds=START_SECONDS, log=log)
            page.reload()

            expect(page.get_by_role("button", name="Log out demo")).to_be_visible()
            assert page.url == f"{site}/stream/", "the restart sent the member to log in"
            assert log.read_text().count("Demo household ready.") == 2
