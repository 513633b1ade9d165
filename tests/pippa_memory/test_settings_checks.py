"""``manage.py check`` names each memory setting that cannot work, and checks nothing with memory
switched off."""

from typing import Any

import pytest
from django.core import checks

pytestmark = pytest.mark.django_db

GOOD = {"URL": "http://127.0.0.1:8765", "TOKEN": "t", "BRAIN_SECRET": ""}


def memory_ids() -> list[str]:
    return sorted(
        m.id
        for m in checks.run_checks()
        if m.id and m.id.startswith("pippa_memory.") and m.id != "pippa_memory.W003"
    )


@pytest.mark.parametrize(
    ("values", "ids"),
    [
        ({}, []),
        ({"URL": ""}, ["pippa_memory.W001"]),
        ({"URL": "", "TOKEN": ""}, ["pippa_memory.W001"]),
        ({"URL": "ftp://engine"}, ["pippa_memory.E001"]),
        ({"URL": "http://"}, ["pippa_memory.E001"]),
        ({"TOKEN": ""}, ["pippa_memory.W002"]),
        ({"BRAIN_SECRET": "whsec_not*base64!"}, ["pippa_memory.E004"]),
        ({"CHAT_BUDGET": 0}, ["pippa_memory.E002"]),
        ({"READ_TIMEOUT": "1"}, ["pippa_memory.E002"]),
        ({"MAX_BLOCK_CHARS": 0}, ["pippa_memory.E003"]),
        ({"BREAKER_FAIL_MAX": 2.5}, ["pippa_memory.E003"]),
        ({"OUTBOX_POLL_INTERVAL": 0}, ["pippa_memory.E002"]),
        ({"ABSENT_RETRY_SECONDS": -5}, ["pippa_memory.E002"]),
        ({"OUTBOX_BATCH_SIZE": 0}, ["pippa_memory.E003"]),
        ({"OUTBOX_WORKER_THREADS": 1.5}, ["pippa_memory.E003"]),
        ({"OUTBOX_WAKE_ADDRESS": "127.0.0.1"}, ["pippa_memory.E006"]),
        ({"OUTBOX_WAKE_ADDRESS": "127.0.0.1:99999"}, ["pippa_memory.E006"]),
        ({"OUTBOX_WAKE_ADDRESS": ""}, []),
        (
            {"URL": "ftp://engine", "TOKEN": "", "CONNECT_TIMEOUT": -1, "MAX_RESPONSE_BYTES": 0},
            ["pippa_memory.E001", "pippa_memory.E002", "pippa_memory.E003", "pippa_memory.W002"],
        ),
    ],
)
def test_each_unusable_memory_setting_is_named_by_its_check(
    configure: Any, values: dict[str, Any], ids: list[str]
) -> None:
    configure(**{**GOOD, **values})

    assert memory_ids() == ids


def test_an_sqlite_too_old_to_claim_outbox_rows_is_named(
    configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import connection

    configure(**GOOD)
    monkeypatch.setattr("pippa_memory.checks.sqlite3.sqlite_version_info", (3, 34, 1))

    expected = ["pippa_memory.E007"] if connection.vendor == "sqlite" else []
    assert memory_ids() == expected


def test_with_memory_switched_off_no_memory_setting_is_checked(configure: Any) -> None:
    configure(ENABLED=False, URL="ftp://engine", CHAT_BUDGET=0, BRAIN_SECRET="whsec_not*base64!")

    assert memory_ids() == []
