"""Reliability tests reuse the memory plug-in's fixtures: the reference engine and its settings."""

from tests.pippa_memory.conftest import (  # noqa: F401
    _fresh_breaker,
    configure,
    engine,
    fixed_clock,
    memory_on,
    memory_settings,
)
