"""Logins are throttled (django-axes): five wrong passwords for one username from one address lock
that pair out, on the login page and the admin's, until the cool-off; the right password does not
get through a lock; a forged X-Forwarded-For does not open a fresh count; success clears the count."""

from typing import Any

import pytest
from django.test import Client

from tests.support.factory_defaults import PASSWORD

pytestmark = pytest.mark.django_db

WRONG = "not-the-password"
HOME = "10.0.0.1"


def log_in(
    password: str,
    *,
    username: str = "alice",
    address: str = HOME,
    path: str = "/accounts/login/",
    **headers: str,
) -> Any:
    """One login attempt from ``address``, as a browser makes it: the form, then the post."""
    client = Client(REMOTE_ADDR=address, **headers)
    client.get(path)
    response = client.post(path, {"username": username, "password": password, "next": "/"})
    response.logged_in = "_auth_user_id" in client.session
    return response


def test_the_fifth_wrong_password_locks_the_username_out_from_that_address(user: Any) -> None:
    statuses = [log_in(WRONG).status_code for _ in range(5)]
    right = log_in(PASSWORD)

    assert statuses == [200, 200, 200, 200, 429]
    assert right.status_code == 429
    assert not right.logged_in


def test_the_lockout_page_says_why_and_for_how_long(user: Any) -> None:
    for _ in range(5):
        log_in(WRONG)

    page = log_in(PASSWORD).content.decode()

    assert "Too many failed logins" in page
    assert "15 minutes" in page


def test_the_lock_holds_one_username_from_one_address_only(user: Any, make_user: Any) -> None:
    make_user("bob")
    for _ in range(5):
        log_in(WRONG)

    assert log_in(PASSWORD, address="10.0.0.2").logged_in
    assert log_in(PASSWORD, username="bob").logged_in
    assert not log_in(PASSWORD).logged_in


def test_a_forged_x_forwarded_for_does_not_start_a_fresh_count(user: Any) -> None:
    for index in range(5):
        log_in(WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{index}")

    right = log_in(PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.99")

    assert right.status_code == 429
    assert not right.logged_in


def test_behind_one_proxy_the_address_is_the_one_the_proxy_saw(user: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    for index in range(5):  # the client prepends a forged address; the proxy appends the real one
        log_in(WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{index}, 198.51.100.7")

    assert not log_in(PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7").logged_in
    assert log_in(PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8").logged_in


def test_a_successful_login_clears_the_count(user: Any) -> None:
    for _ in range(4):
        log_in(WRONG)
    assert log_in(PASSWORD).logged_in

    statuses = [log_in(WRONG).status_code for _ in range(5)]

    assert statuses == [200, 200, 200, 200, 429]  # counted afresh from the success


def test_the_admin_login_is_locked_too(make_user: Any) -> None:
    make_user("root", is_staff=True, is_superuser=True)
    statuses = [log_in(WRONG, username="root", path="/admin/login/").status_code for _ in range(5)]
    right = log_in(PASSWORD, username="root", path="/admin/login/")

    assert statuses[-1] == 429
    assert right.status_code == 429
    assert not right.logged_in
