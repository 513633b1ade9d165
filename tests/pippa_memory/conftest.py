"""Fixtures for the memory plug-in: the reference engine on a real socket, and memory pointed at it."""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from pippa_memory.engine.client import BREAKER
from reference_engine.server import ReferenceEngine

TOKEN = "engine-test-token"
FIXED_NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def engine() -> Iterator[ReferenceEngine]:
    """The reference engine on a free loopback port, in a background thread: its own fresh
    SQLite database (a temporary file), and the control door open."""
    running = ReferenceEngine(token=TOKEN, answer_delay=0.0, control=True).start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _fresh_breaker() -> Iterator[None]:
    """A fresh breaker, and no rendered blocks or logged revision conflicts remembered from
    another test's database rows."""
    from pippa_memory.pins.blocks import REPORTED_CONFLICTS
    from pippa_memory.pins.turn_block import RENDERED

    BREAKER.reset()
    RENDERED.clear()
    REPORTED_CONFLICTS.clear()
    yield
    BREAKER.reset()
    RENDERED.clear()
    REPORTED_CONFLICTS.clear()


@pytest.fixture
def memory_settings(settings: Any) -> dict[str, Any]:
    """The PIPPA_MEMORY dict for this test, with short budgets; change it through ``configure``."""
    settings.PIPPA_MEMORY = {
        **settings.PIPPA_MEMORY,
        "ENABLED": True,
        "URL": "",
        "TOKEN": TOKEN,
        "CONNECT_TIMEOUT": 0.5,
        "READ_TIMEOUT": 0.5,
        "CHAT_BUDGET": 0.5,
        "BREAKER_FAIL_MAX": 3,
        "BREAKER_RESET_TIMEOUT": 30.0,
        # No rings leave the suite unless a test listens for them on a port of its own.
        "OUTBOX_WAKE_ADDRESS": "",
    }
    return settings.PIPPA_MEMORY


@pytest.fixture
def configure(settings: Any, memory_settings: dict[str, Any]) -> Any:
    def change(**values: Any) -> None:
        settings.PIPPA_MEMORY = {**settings.PIPPA_MEMORY, **values}

    return change


@pytest.fixture
def memory_on(engine: ReferenceEngine, configure: Any) -> ReferenceEngine:
    """Memory on, pointed at the reference engine."""
    configure(URL=engine.url)
    return engine


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """The per-turn slot's clock, frozen so two prompts can be compared byte for byte."""
    monkeypatch.setattr("webui.prompt.assembly.timezone.now", lambda: FIXED_NOW)
    return FIXED_NOW
