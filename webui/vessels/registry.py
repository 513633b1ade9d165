"""The adapters this installation provides, filed under the ``Vessel.adapter`` value each serves.

Each adapter class names itself (``adapter_name``); the ``Vessel.adapter`` choices are the names
and labels in :mod:`webui.models.vessels`, which the model reads without importing any adapter.
This module refuses to load when the two lists disagree.
"""

from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

from webui.models.vessels import ADAPTER_LABELS
from webui.vessels.anthropic import AnthropicAdapter
from webui.vessels.base import VesselAdapter
from webui.vessels.errors import VesselConfigurationError
from webui.vessels.gemini import GeminiAdapter
from webui.vessels.offline import OfflineAdapter
from webui.vessels.ollama import OllamaAdapter
from webui.vessels.openai import OpenAIAdapter
from webui.vessels.openai_compatible import OpenAICompatibleAdapter
from webui.vessels.openai_responses import OpenAIResponsesAdapter

if TYPE_CHECKING:
    from webui.models import Vessel

#: Every adapter, in the order the vessel form lists them.
ADAPTERS: tuple[type[VesselAdapter], ...] = (
    AnthropicAdapter,
    OpenAIAdapter,
    OpenAIResponsesAdapter,
    GeminiAdapter,
    OllamaAdapter,
    OpenAICompatibleAdapter,
    OfflineAdapter,
)

#: Each adapter class under the ``Vessel.adapter`` value it serves.
ADAPTER_CLASSES: dict[str, type[VesselAdapter]] = {
    adapter.adapter_name: adapter for adapter in ADAPTERS
}


if list(ADAPTER_CLASSES) != list(ADAPTER_LABELS):
    raise ImproperlyConfigured(
        f"The adapters {list(ADAPTER_CLASSES)} and the adapter names {list(ADAPTER_LABELS)} "
        "(webui/models/vessels.py) must be the same, in the same order."
    )


def build_adapter(vessel: "Vessel") -> VesselAdapter:
    """An adapter instance for ``vessel``, whether or not it is ready to be called."""
    adapter_class = ADAPTER_CLASSES.get(vessel.adapter)
    if adapter_class is None:
        raise VesselConfigurationError(
            f"The vessel {vessel.name} uses the adapter {vessel.adapter!r}, which this installation "
            "does not provide."
        )
    return adapter_class(vessel)


def vessel_problem(vessel: "Vessel") -> str | None:
    """What stops ``vessel`` from being called (switched off, no key, no endpoint), or ``None``."""
    if not vessel.enabled:
        return f"The vessel {vessel.name} is switched off."
    try:
        return build_adapter(vessel).configuration_problem()
    except VesselConfigurationError as error:
        return error.message


def adapter_for(vessel: "Vessel") -> VesselAdapter:
    """An adapter ready to call ``vessel``; a configuration error says what is missing."""
    problem = vessel_problem(vessel)
    if problem:
        code = "not_configured" if vessel.enabled else "switched_off"
        raise VesselConfigurationError(problem, code=code)
    return build_adapter(vessel)
