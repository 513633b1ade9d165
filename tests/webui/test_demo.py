"""The database the suite runs on, and the demo household."""

import os
from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from webui.models import Soul, Vessel
from webui.prompt.vault import read_vault


@pytest.mark.django_db
def test_the_suite_runs_on_the_database_database_url_names() -> None:
    url = os.environ.get("DATABASE_URL", "sqlite://")
    expected = "postgresql" if url.startswith(("postgres://", "postgresql://")) else "sqlite"

    assert connection.vendor == expected
    if expected == "sqlite":
        # The web server and the worker share the file: WAL, a busy timeout, IMMEDIATE writers.
        options = settings.DATABASES["default"]["OPTIONS"]
        assert "journal_mode=WAL" in options["init_command"]
        assert "busy_timeout" in options["init_command"]
        assert options["transaction_mode"] == "IMMEDIATE"


@pytest.mark.django_db
def test_load_demo_creates_a_household_ready_to_chat_and_prints_the_login() -> None:
    out = StringIO()

    call_command("load_demo", password="pw-for-the-test", stdout=out)
    call_command("load_demo", password="pw-again", stdout=StringIO())

    printed = out.getvalue()
    assert "Username: demo" in printed
    assert "Password: pw-for-the-test" in printed
    member = get_user_model().objects.get(username="demo")
    assert member.check_password("pw-again")
    assert member.is_staff
    soul = Soul.objects.get()
    assert read_vault(soul.vault_path).text.startswith("## Identity")
    vessel = Vessel.objects.get()
    assert vessel.adapter == "offline"
    assert vessel.enabled
    from webui.models import ScheduledJob

    assert sorted(ScheduledJob.objects.values_list("kind", flat=True)) == ["job", "wake"]
