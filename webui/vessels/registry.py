"""Chooses the adapter class for a vessel from its ``adapter`` field."""

from typing import TYPE_CHECKING

from django.utils.module_loading import import_string

from webui.vessels.base import VesselAdapter
from webui.vessels.errors import VesselConfigurationError

if TYPE_CHECKING:
    from webui.models import Vessel

ADAPTER_CLASSES: dict[str, str] = {
    "offline": "webui.vessels.offline.OfflineAdapter",
}


def adapter_for(vessel: "Vessel") -> VesselAdapter:
    """An adapter instance for ``vessel``; raise a configuration error if it cannot be called."""
    if not vessel.enabled:
        raise VesselConfigurationError(f"The vessel {vessel.name} is switched off.")
    dotted = ADAPTER_CLASSES.get(vessel.adapter)
    if dotted is None:
        raise VesselConfigurationError(
            f"The vessel {vessel.name} uses the adapter {vessel.adapter!r}, which this installation "
            "does not provide."
        )
    adapter = import_string(dotted)(vessel)
    problem = adapter.configuration_problem()
    if problem:
        raise VesselConfigurationError(problem)
    return adapter
