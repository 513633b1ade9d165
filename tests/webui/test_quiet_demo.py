"""A quiet, steady demo (issue 27): ``load_demo --login-file`` keeps the login it printed the first
time, so a second ``make run`` does not log the family out; its job and wake run hourly and daily;
and with ``DEBUG`` off (as ``make run`` serves) a wrong link or a page for staff gets the site's
own plain pages, never Django's debug page or a bare "403 Forbidden"."""

import stat
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.views import defaults

from webui.models import ScheduledJob

pytestmark = pytest.mark.django_db


def load_demo(*args: str) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def printed_password(printed: str) -> str:
    line = next(line for line in printed.splitlines() if "Password:" in line)
    return line.split("Password:")[1].split()[0]


def test_a_second_run_keeps_and_prints_the_login_of_the_first(tmp_path: Path) -> None:
    login_file = tmp_path / ".demo-login"

    first = printed_password(load_demo("--login-file", str(login_file)))
    second = printed_password(load_demo("--login-file", str(login_file)))

    assert first == second
    assert get_user_model().objects.get(username="demo").check_password(first)
    assert login_file.read_text().strip() == first
    assert stat.S_IMODE(login_file.stat().st_mode) == 0o600


def test_a_restart_keeps_the_demo_members_session(tmp_path: Path, client: Client) -> None:
    login_file = tmp_path / ".demo-login"
    password = printed_password(load_demo("--login-file", str(login_file)))
    logged_in = client.post("/accounts/login/", {"username": "demo", "password": password})
    assert logged_in.status_code == 302
    assert client.get("/").status_code == 200

    load_demo("--login-file", str(login_file))  # the next `make run`

    page = client.get("/")
    assert page.status_code == 200, "the restart logged the demo member out"
    assert page.wsgi_request.user.username == "demo"


def test_a_password_changed_since_the_file_was_made_is_left_and_said(tmp_path: Path) -> None:
    login_file = tmp_path / ".demo-login"
    first = printed_password(load_demo("--login-file", str(login_file)))
    member = get_user_model().objects.get(username="demo")
    member.set_password("chosen by the member")
    member.save()

    printed = load_demo("--login-file", str(login_file))

    assert get_user_model().objects.get(username="demo").check_password("chosen by the member")
    assert printed_password(printed) == first
    assert "since changed: delete it for a new one" in printed


def test_a_new_database_gets_the_kept_password(tmp_path: Path) -> None:
    login_file = tmp_path / ".demo-login"
    kept = printed_password(load_demo("--login-file", str(login_file)))
    get_user_model().objects.filter(username="demo").delete()  # db.sqlite3 removed, file kept

    load_demo("--login-file", str(login_file))

    assert get_user_model().objects.get(username="demo").check_password(kept)


def test_without_a_login_file_each_run_sets_a_fresh_password() -> None:
    first = printed_password(load_demo())
    second = printed_password(load_demo())

    assert first != second


def test_the_demo_job_runs_hourly_and_the_wake_daily_and_a_rerun_keeps_their_times() -> None:
    load_demo()
    due = dict(ScheduledJob.objects.values_list("kind", "next_run_at"))
    load_demo()

    schedules = dict(ScheduledJob.objects.values_list("kind", "schedule"))
    assert schedules == {"job": "every 1h", "wake": "every 1d"}
    assert dict(ScheduledJob.objects.values_list("kind", "next_run_at")) == due


@pytest.mark.parametrize(
    ("path", "status", "shown", "hidden"),
    [
        pytest.param(
            "/no-such-page/",
            404,
            ['id="error-page"', "site.css", "Back to your conversations"],
            ["URLconf"],
            id="a wrong link gets the plain 404",
        ),
        pytest.param(
            "/cache/",
            403,
            ["Not for this account", "site.css"],
            [],
            id="a member on the cache page gets the styled 403",
        ),
    ],
)
def test_an_error_is_the_sites_own_styled_page(
    client: Client, user: Any, path: str, status: int, shown: list[str], hidden: list[str]
) -> None:
    client.force_login(user)

    response = client.get(path)

    html = response.content.decode()
    assert response.status_code == status
    for words in shown:
        assert words in html
    for words in hidden:
        assert words not in html


def test_a_server_error_gets_the_sites_plain_500_page() -> None:
    response = defaults.server_error(RequestFactory().get("/"))

    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in html
    assert "site.css" in html
    assert "Traceback" not in html
