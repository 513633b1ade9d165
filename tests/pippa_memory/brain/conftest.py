"""Fixtures for the brain door's tests: the door open with two rotated secrets, and the vessels it
may judge with."""

from typing import Any

import pytest

from tests.support.brain_door import NEW_SECRET, OLD_SECRET, claude_vessel
from webui.models import Soul, Vessel


@pytest.fixture
def door(configure: Any, soul: Soul) -> None:
    """The door open to calls signed with either secret, its throttle's counters at zero (a test
    module asks for it with ``usefixtures``, or opens the door its own way)."""
    from django.core.cache import cache

    cache.clear()  # the throttle's counters
    configure(BRAIN_SECRET=f"{NEW_SECRET} {OLD_SECRET}", BRAIN_RATE="1000/min")


@pytest.fixture
def offline(db: None) -> Vessel:
    return Vessel.objects.create(
        slug="offline", name="Offline", adapter="offline", model="offline-1", brain_priority=10
    )


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Vessel:
    monkeypatch.setenv("BRAIN_TEST_KEY", "sk-ant-brain-SECRET")
    return claude_vessel("BRAIN_TEST_KEY", brain_priority=5)
