"""System checks for the memory plug-in (``manage.py check``): its settings, and dead turn events."""

import sqlite3
from typing import Any
from urllib.parse import urlsplit

from django.core import checks
from django.db import DatabaseError, connection
from standardwebhooks import Webhook

from pippa_memory.brain.throttles import parse_rate
from pippa_memory.conf import memory_settings


@checks.register()
def check_memory_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``pippa_memory.E001``–``E004`` for settings that cannot work, ``W001``/``W002`` for gaps.

    With memory switched off nothing is checked: no setting is used then.
    """
    if not memory_settings.ENABLED:
        return []
    return [
        *engine_problems(),
        *brain_secret_problems(),
        *number_problems(),
        *outbox_queue_problems(),
    ]


def engine_problems() -> list[checks.CheckMessage]:
    """``W001`` for no engine URL; ``E001`` for one that is not http(s), ``W002`` for no token."""
    url = memory_settings.URL
    if not url:
        return [
            checks.Warning(
                "PIPPA_MEMORY_URL is not set: memory runs absent (no block, no engine calls).",
                hint="Set PIPPA_MEMORY_URL to the memory engine, or PIPPA_MEMORY_ENABLED=false.",
                id="pippa_memory.W001",
            )
        ]
    found: list[checks.CheckMessage] = []
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        found.append(
            checks.Error(
                f"PIPPA_MEMORY_URL {url!r} is not an http(s) URL.",
                hint="For example http://127.0.0.1:8765",
                id="pippa_memory.E001",
            )
        )
    if not memory_settings.TOKEN:
        found.append(
            checks.Warning(
                "PIPPA_MEMORY_TOKEN is not set: calls to the engine carry no credentials.",
                id="pippa_memory.W002",
            )
        )
    return found


def brain_secret_problems() -> list[checks.CheckMessage]:
    """``E004`` for each brain-door secret that is not a ``whsec_`` secret."""
    found: list[checks.CheckMessage] = []
    for secret in memory_settings.BRAIN_SECRET.split():
        try:
            Webhook(secret)
        except Exception:  # whatever the decoding raises, the secret is unusable
            found.append(
                checks.Error(
                    "A PIPPA_MEMORY_BRAIN_SECRET entry is not a whsec_ secret (base64 after the "
                    "prefix); the brain door ignores it.",
                    id="pippa_memory.E004",
                )
            )
    return found


def number_problems() -> list[checks.CheckMessage]:
    """``E002`` for a time that is not a positive number of seconds, ``E003`` for a count or size
    that is not a whole number of at least 1."""
    found: list[checks.CheckMessage] = []
    for name in (
        "CONNECT_TIMEOUT",
        "READ_TIMEOUT",
        "CHAT_BUDGET",
        "TOOL_BUDGET",
        "UNATTENDED_BUDGET",
        "MANAGE_BUDGET",
        "OUTBOX_DELIVERY_TIMEOUT",
        "BREAKER_RESET_TIMEOUT",
        "OUTBOX_POLL_INTERVAL",
        "ABSENT_RETRY_SECONDS",
    ):
        value = getattr(memory_settings, name)
        if not isinstance(value, int | float) or value <= 0:
            found.append(
                checks.Error(
                    f"PIPPA_MEMORY_{name} must be a positive number of seconds, not {value!r}.",
                    id="pippa_memory.E002",
                )
            )
    for name in (
        "BREAKER_FAIL_MAX",
        "MAX_BLOCK_CHARS",
        "MAX_RESPONSE_BYTES",
        "OUTBOX_BATCH_SIZE",
        "OUTBOX_WORKER_THREADS",
    ):
        value = getattr(memory_settings, name)
        if not isinstance(value, int) or value < 1:
            found.append(
                checks.Error(
                    f"PIPPA_MEMORY_{name} must be a whole number of at least 1, not {value!r}.",
                    id="pippa_memory.E003",
                )
            )
    return found


def outbox_queue_problems() -> list[checks.CheckMessage]:
    """``E006`` for a wake address that is not ``auto``, ``host:port`` or empty; ``E007`` for an SQLite older than
    3.35, which cannot claim outbox rows with ``UPDATE … RETURNING``."""
    found: list[checks.CheckMessage] = []
    address = memory_settings.OUTBOX_WAKE_ADDRESS.strip()
    _, colon, port = address.rpartition(":")
    if address not in ("", "auto") and not (colon and port.isdigit() and 0 < int(port) < 65536):
        found.append(
            checks.Error(
                f"PIPPA_MEMORY_OUTBOX_WAKE_ADDRESS must be auto, host:port or empty, not "
                f"{address!r}.",
                hint="auto (the default) rings through the database's own bell; host:port such "
                "as 127.0.0.1:8766 is a UDP address; empty has the worker poll only.",
                id="pippa_memory.E006",
            )
        )
    if connection.vendor == "sqlite" and sqlite3.sqlite_version_info < (3, 35):
        found.append(
            checks.Error(
                f"SQLite {sqlite3.sqlite_version} cannot claim outbox rows (UPDATE … RETURNING "
                "needs 3.35 or newer).",
                hint="Use a newer SQLite, or PostgreSQL.",
                id="pippa_memory.E007",
            )
        )
    return found


@checks.register()
def check_brain_rates(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``pippa_memory.E005`` for a brain-door rate that is not ``count/period``."""
    found: list[checks.CheckMessage] = []
    for name in ("BRAIN_RATE", "BRAIN_UNSIGNED_RATE", "REFRESH_RATE"):
        try:
            parse_rate(getattr(memory_settings, name))
        except ValueError as exc:
            found.append(checks.Error(f"PIPPA_MEMORY_{name}: {exc}", id="pippa_memory.E005"))
    return found


@checks.register()
def check_dead_turn_events(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``pippa_memory.W003`` while any turn event is dead (the engine never got it)."""
    from pippa_memory.models import OutboxEvent

    try:
        dead = OutboxEvent.objects.dead().count()
    except DatabaseError:
        return []
    if not dead:
        return []
    return [
        checks.Warning(
            f"{dead} turn event(s) are dead: the memory engine never received them.",
            hint="See Outbox events in the admin, or run `manage.py memory_outbox redrive`.",
            id="pippa_memory.W003",
        )
    ]
