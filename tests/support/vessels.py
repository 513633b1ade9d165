"""Vessels the host's tests set up again and again: Claude on a household's key, and a household's
own model server that is down."""

from typing import Any

import pytest

from webui.models import Vessel


def claude(
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    *,
    env: str = "HOUSEHOLD_ANTHROPIC_KEY",
    **fields: Any,
) -> Vessel:
    """An Anthropic vessel named Claude whose key ``key`` is in the variable ``env``
    (``monkeypatch`` undoes it)."""
    monkeypatch.setenv(env, key)
    fields.setdefault("slug", "claude")
    fields.setdefault("name", "Claude")
    fields.setdefault("model", "claude-sonnet-4-5")
    return Vessel.objects.create(adapter="anthropic", api_key_env=env, **fields)


def home_server(**fields: Any) -> Vessel:
    """A household's own model server that is down: an OpenAI-compatible vessel at port 9, where
    nothing listens, that gives up at once."""
    fields.setdefault("slug", "home")
    fields.setdefault("name", "Home server")
    return Vessel.objects.create(
        adapter=Vessel.Adapter.OPENAI_COMPATIBLE,
        model="llama",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        connect_timeout=0.5,
        **fields,
    )


def admin_form(**fields: str) -> dict[str, str]:
    """The admin's vessel form as a browser posts it, with what the form shows by default and
    ``fields`` (the slug, name, adapter and model at least) filled in."""
    return {
        "base_url": "",
        "api_key_env": "",
        "memory_tool_enabled": "on",
        "brain_priority": "",
        "enabled": "on",
        "max_output_tokens": "1024",
        "connect_timeout": "5",
        "read_timeout": "60",
        "deadline": "120",
        "max_retries": "2",
        **fields,
    }
