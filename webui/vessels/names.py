"""The adapters this installation provides, by name and label only: the ``Vessel.adapter`` choices.

A leaf, so the ``Vessel`` model takes its choices from here without importing any transport. The
registry (:mod:`webui.vessels.registry`) files each adapter class under one of these names and
refuses to load when the two disagree, so adding a provider is one adapter module, one line in
the registry and one line here.
"""

#: Each ``Vessel.adapter`` value and how the vessel form names it, in the order the form lists them.
ADAPTER_LABELS: dict[str, str] = {
    "anthropic": "Anthropic Messages",
    "openai": "OpenAI Chat Completions",
    "openai_responses": "OpenAI Responses",
    "gemini": "Google Gemini",
    "ollama": "Ollama",
    "openai_compatible": "OpenAI-compatible server",
    "offline": "Offline (no network)",
}


def adapter_choices() -> list[tuple[str, str]]:
    """``(value, label)`` for each adapter, in order: the ``Vessel.adapter`` field's choices."""
    return list(ADAPTER_LABELS.items())
