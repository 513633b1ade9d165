"""The plug-in's settings: one namespaced ``PIPPA_MEMORY`` dict in Django settings, with defaults.

Read through :data:`memory_settings`, which looks the value up on every access so that
``override_settings`` in tests and changes between requests are always seen.
"""

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # The one switch: false closes every seam and door on this side.
    "ENABLED": True,
}


class MemorySettings:
    """Attribute access to ``settings.PIPPA_MEMORY`` with :data:`DEFAULTS` filled in."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown PIPPA_MEMORY setting: {name}")
        return getattr(settings, "PIPPA_MEMORY", {}).get(name, DEFAULTS[name])


memory_settings = MemorySettings()
