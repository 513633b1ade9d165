"""The plug-in's settings: one namespaced ``PIPPA_MEMORY`` dict in Django settings, with defaults.

Read through :data:`memory_settings`, which looks the value up on every access so that
``override_settings`` in tests and changes between requests are always seen.
"""

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # The one switch: false closes every seam and door on this side.
    "ENABLED": True,
    # Base URL of the memory engine; empty means "not configured" (absent, no traffic).
    "URL": "",
    # Sent as "Authorization: Bearer ..." on every call to the engine.
    "TOKEN": "",
    "CONNECT_TIMEOUT": 0.5,
    "READ_TIMEOUT": 1.0,
    # Total seconds the engine may cost one chat turn.
    "CHAT_BUDGET": 1.5,
    # Consecutive failures that open the breaker, and seconds until it lets one call through.
    "BREAKER_FAIL_MAX": 3,
    "BREAKER_RESET_TIMEOUT": 30.0,
    # A block longer than this is refused (pinned absent, reason "block_too_large"), never cut.
    "MAX_BLOCK_CHARS": 16000,
    # An engine answer larger than this is refused while it is read.
    "MAX_RESPONSE_BYTES": 1_000_000,
}


class MemorySettings:
    """Attribute access to ``settings.PIPPA_MEMORY`` with :data:`DEFAULTS` filled in."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown PIPPA_MEMORY setting: {name}")
        return getattr(settings, "PIPPA_MEMORY", {}).get(name, DEFAULTS[name])


memory_settings = MemorySettings()
