"""A very long address answers 414 in the site's own shape through the Procfile's gunicorn (its
settings, ``pippa_site/gunicorn_conf.py``): JSON under ``/api/``, the site's plain error page elsewhere,
never gunicorn's own HTML; an address of ordinary length is read as before."""

import sys
from pathlib import Path

import pytest
import requests

from tests.support.live_servers import free_port, running_server, server_environment
from webui.web.long_url_guard import MAX_URL_CHARS

pytestmark = pytest.mark.xdist_group("production_server")

#: Well past gunicorn's default request-line limit (4094) and its largest (8190).
LONG = "w" * 20_000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> str:
    port = free_port()
    folder = tmp_path_factory.mktemp("long-url")
    env = server_environment(
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        DJANGO_LOG_LEVEL="ERROR",
        PATH=f"{Path(sys.executable).parent}",
    )
    command = [sys.executable, "-m", "gunicorn", "-c", "python:pippa_site.gunicorn_conf"]
    command += ["-b", f"127.0.0.1:{port}", "--workers", "1", "pippa_site.wsgi"]
    with running_server(command, port=port, env=env) as url:
        yield url


def test_a_very_long_api_address_is_a_414_in_the_apis_error_shape(site: str) -> None:
    answer = requests.get(f"{site}/api/conversations/?q={LONG}", timeout=30)

    assert answer.status_code == 414, answer.text[:300]
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.json()["error"]
    assert error["code"] == "uri_too_long"
    assert error["details"]["limit"] == MAX_URL_CHARS
    assert error["details"]["length"] > 20_000
    assert "Shorten it" in error["message"]


def test_a_very_long_page_address_is_a_414_on_the_sites_error_page(site: str) -> None:
    answer = requests.get(f"{site}/conversations/{LONG}/", timeout=30)

    assert answer.status_code == 414, answer.text[:300]
    assert answer.headers["Content-Type"].startswith("text/html")
    assert "Something in the request was not right" in answer.text
    assert "the site reads at most" in answer.text
    assert "<h1><p>URI Too Long" not in answer.text  # gunicorn's own page


def test_an_address_just_within_the_limit_is_read_as_before(site: str) -> None:
    path = "/api/conversations/?q="
    answer = requests.get(f"{site}{path}{'w' * (MAX_URL_CHARS - len(path))}", timeout=30)

    assert answer.status_code == 403, answer.text[:300]  # not logged in: the route answered
    assert answer.json()["error"]["code"] == "not_authenticated"
