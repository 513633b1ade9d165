"""Chooses the adapter class for a vessel from its ``adapter`` field."""

from typing import TYPE_CHECKING

from django.utils.module_loading import import_string

from webui.vessels.base import VesselAdapter
from webui.vessels.errors import VesselConfigurationError

if TYPE_CHECKING:
    from webui.models import Vessel

ADAPTER_CLASSES: dict[str, str] = {
    "anthropic": "webui.vessels.anthropic.AnthropicAdapter",
    "openai": "webui.vessels.openai.OpenAIAdapter",
    "openai_responses": "webui.vessels.openai_responses.OpenAIResponsesAdapter",
    "gemini": "webui.vessels.gemini.GeminiAdapter",
    "ollama": "webui.vessels.ollama.OllamaAdapter",
    "openai_compatible": "webui.vessels.openai_compatible.OpenAICompatibleAdapter",
    "offline": "webui.vessels.offline.OfflineAdapter",
}


def build_adapter(vessel: "Vessel") -> VesselAdapter:
    """An adapter instance for ``vessel``, whether or not it is ready to be called."""
    dotted = ADAPTER_CLASSES.get(vessel.adapter)
    if dotted is None:
        raise VesselConfigurationError(
            f"The vessel {vessel.name} uses the adapter {vessel.adapter!r}, which this installation "
            "does not provide."
        )
    return import_string(dotted)(vessel)


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
        raise VesselConfigurationError(problem)
    return build_adapter(vessel)
