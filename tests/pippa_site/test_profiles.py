"""The project's settings profiles (``pippa_site``), each run as ``manage.py`` runs it: the
development profile, the hardened production one, and both read from the environment."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PIPPA_"))}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_profile_passes_check_deploy_with_no_warnings() -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        **PRODUCTION,
        DJANGO_ALLOWED_HOSTS="pippa.example.org",
        PIPPA_MEMORY_URL="https://memory.example.org",
        PIPPA_MEMORY_TOKEN="engine-token",
    )

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_profile_refuses_to_start_without_a_secret_key() -> None:
    result = manage("check", DJANGO_SETTINGS_MODULE="pippa_site.settings_production")

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


PRODUCTION_SECRET = "k" * 20 + "-production-secret-from-the-environment-0123456789"
#: The production profile, with the key it needs to start.
PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "pippa_site.settings_production",
    "DJANGO_SECRET_KEY": PRODUCTION_SECRET,
}
SHOW_CONNECTION_SETTINGS = (
    "from django.conf import settings as s; d = s.DATABASES['default']; "
    "print(d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])"
)


def connection_settings(show: str = SHOW_CONNECTION_SETTINGS, **env: str) -> list[str]:
    """What ``show`` prints (the default database's ``CONN_MAX_AGE`` and ``CONN_HEALTH_CHECKS``)
    under the environment ``env``, on a database never created unless ``env`` names one."""
    env.setdefault("DATABASE_URL", "sqlite:////tmp/never-created.sqlite3")
    result = manage("shell", "-v", "0", "-c", show, **env)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.parametrize(
    "database_url", ["sqlite:////tmp/never-created.sqlite3", "postgres://u@127.0.0.1:9/never"]
)
def test_production_profile_keeps_database_connections_with_a_health_check(
    database_url: str,
) -> None:
    assert connection_settings(**PRODUCTION, DATABASE_URL=database_url) == ["600", "True"]


def test_production_profile_persistent_connections_follow_the_environment() -> None:
    assert connection_settings(**PRODUCTION, DJANGO_CONN_MAX_AGE="0") == ["0", "True"]


def test_the_development_profile_opens_a_connection_per_request() -> None:
    show = SHOW_CONNECTION_SETTINGS.replace("d['CONN_HEALTH_CHECKS']", "''")
    assert connection_settings(show) == ["0"]


def test_the_development_profile_is_what_check_deploy_warns_about() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING")

    assert result.returncode != 0
    assert "security.W018" in result.stderr or "security.W009" in result.stderr


def test_settings_come_from_the_environment() -> None:
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings as s; "
        "print(s.DEBUG, s.ALLOWED_HOSTS, s.PIPPA_MEMORY['ENABLED'], s.PIPPA_MEMORY['URL'])",
        DJANGO_DEBUG="true",
        DJANGO_ALLOWED_HOSTS="a.example,b.example",
        PIPPA_MEMORY_ENABLED="false",
        PIPPA_MEMORY_URL="http://127.0.0.1:9/",
        DATABASE_URL="sqlite:////tmp/never-created.sqlite3",
    )

    assert result.returncode == 0, result.stderr
    assert "True ['a.example', 'b.example'] False http://127.0.0.1:9/" in result.stdout
