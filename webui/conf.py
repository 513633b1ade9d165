"""The host's own settings: one namespaced ``WEBUI`` dict in Django settings, with defaults here only.

Each setting ``NAME`` is read, in order, from ``settings.WEBUI["NAME"]`` and from its default
below. ``pippa_site/host_settings.py`` fills that dict from the environment with :func:`from_environment`
(``WEBUI_NAME``, cast to the default's type), so a variable that is not set falls through to the
default stated here and nowhere else. Read through :data:`webui_settings`, which looks the value up
on every access so that ``override_settings`` in tests is always seen (as ``pippa_memory.conf``
does for the plug-in).
"""

import json
from typing import Any

import environ
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from webui.published_prices import PUBLISHED_CACHE_PRICES

DEFAULTS: dict[str, Any] = {
    # Tool rounds one turn may take before the turn stops and says so.
    "MAX_TOOL_ROUNDS": 4,
    # Longest user message the API accepts, in characters.
    "MAX_MESSAGE_CHARS": 20000,
    # Replies one member may have being written at once, streamed or not (webui.api.open_replies);
    # past it a new one is refused with 429 (0: no cap). Each holds a web thread while written.
    "MAX_OPEN_REPLIES": 4,
    # Full-jitter backoff between retries of a vessel call: uniform(0, min(max, base * 2**n)).
    "VESSEL_RETRY_BASE_DELAY": 0.5,
    "VESSEL_RETRY_MAX_DELAY": 8.0,
    # Retention (`manage.py prune`, run daily by the scheduler): days before each kind of row is
    # deleted; 0 keeps it for ever. Unattended runs with their conversations; temporary
    # conversations, counted from their last message.
    "PRUNE_UNATTENDED_RUNS_DAYS": 90.0,
    "PRUNE_TEMPORARY_DAYS": 1.0,
    # Rows deleted per transaction.
    "PRUNE_BATCH_SIZE": 500,
    # The history cache (webui.prompt.history): each process caches the history of at most this
    # many conversations and bytes, and drops one nobody has used for the idle seconds (so what
    # another process deleted leaves it too). Read when the process starts.
    "HISTORY_CACHE_CONVERSATIONS": 256,
    "HISTORY_CACHE_MAX_BYTES": 64 * 1024 * 1024,
    "HISTORY_CACHE_IDLE_SECONDS": 900.0,
    # The vault-base cache (webui.prompt.assembly): soul vault texts by snapshot, at most this
    # many and bytes. Snapshots never change, so nothing else drops them. Read at start.
    "VAULT_CACHE_TEXTS": 256,
    "VAULT_CACHE_MAX_BYTES": 16 * 1024 * 1024,
    # The lease a running turn holds its conversation by (webui.turns.lock), in seconds, renewed by
    # a heartbeat every third of it: a process killed mid-turn frees the conversation this long
    # after its last beat. An unattended run is held by a lease as long (webui.unattended.lease).
    "TURN_LEASE_SECONDS": 15.0,
    # Seconds between the heartbeats each long-running process writes (webui.health): the health
    # page calls a process that has not beaten for three of them stopped.
    "HEARTBEAT_SECONDS": 10.0,
    # Seconds the offline vessel's stream waits between the pieces of its reply, so a demo or a
    # test can watch a reply arrive piece by piece; 0 never waits.
    "OFFLINE_PACE_SECONDS": 0.0,
    # Each provider's published prompt-cache prices, per adapter and model family, with their
    # source and the day they were read (webui.published_prices); the cache bill is estimated from
    # them. WEBUI_CACHE_PRICES (JSON) replaces the adapters it names and keeps the others.
    "CACHE_PRICES": PUBLISHED_CACHE_PRICES,
}


def from_environment(env: environ.Env) -> dict[str, Any]:
    """The ``WEBUI_*`` variables that are set, each cast to its default's type (for settings.py)."""
    return variables_that_are_set(env, prefix="WEBUI_", defaults=DEFAULTS)


def variables_that_are_set(
    env: environ.Env, *, prefix: str, defaults: dict[str, Any]
) -> dict[str, Any]:
    """The variables ``prefix`` + a name in ``defaults`` that are set, each cast to its default's
    type; a setting whose variable is not set is left out, so its default is stated only once.

    A value that is not of that type stops the start with the variable's name and what it held.
    """
    read = {}
    for name, default in defaults.items():
        variable = f"{prefix}{name}"
        if variable not in env:
            continue
        kind = type(default)
        if kind is dict:
            read[name] = {**default, **_json_object(variable, env.str(variable))}
            continue
        try:
            read[name] = env.get_value(variable, cast=kind)
        except ValueError:
            noun = "a whole number" if kind is int else "a number"
            raise ImproperlyConfigured(
                f"{variable} must be {noun}, not {env.str(variable)!r}."
            ) from None
    return read


def _json_object(variable: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{variable} must be JSON: {exc}.") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{variable} must be a JSON object, not {text!r}.")
    return value


class WebUISettings:
    """Attribute access to ``settings.WEBUI`` with :data:`DEFAULTS` filled in."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown WEBUI setting: {name}")
        return getattr(settings, "WEBUI", {}).get(name, DEFAULTS[name])


webui_settings = WebUISettings()
