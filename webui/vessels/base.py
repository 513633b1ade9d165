"""The contract every vessel adapter fills, in the style of django-anymail's backends.

:meth:`VesselAdapter.complete` is the template method: build the provider's request from the
assembled :class:`~webui.prompt.Prompt`, send it, parse the answer into a :class:`VesselReply`.
Capability flags are class attributes so callers can ask before they call.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from webui.prompt import Prompt, ToolCall, ToolDefinition

if TYPE_CHECKING:
    from webui.models import Vessel


def normalised_usage(
    *, input_tokens: int = 0, output_tokens: int = 0, cached_input_tokens: int = 0
) -> dict[str, int]:
    """Usage in the one shape the host stores, whatever the provider called its fields."""
    return {
        "input_tokens": int(input_tokens or 0),
        "output_tokens": int(output_tokens or 0),
        "cached_input_tokens": int(cached_input_tokens or 0),
    }


@dataclass(frozen=True)
class VesselReply:
    """What one vessel call gave back: text, tool calls (possibly both) and normalised usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: dict[str, int] = field(default_factory=normalised_usage)


class VesselAdapter(ABC):
    """One provider's way of being called. Subclasses live one per module in this package."""

    #: The ``Vessel.adapter`` value this class serves.
    adapter_name: ClassVar[str]
    #: Whether the vessel needs an API key from the environment variable named on the vessel.
    requires_api_key: ClassVar[bool] = True
    #: Whether the adapter can offer tools to the model.
    supports_tools: ClassVar[bool] = True

    def __init__(self, vessel: "Vessel") -> None:
        self.vessel = vessel

    def complete(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> VesselReply:
        """Call the vessel once with ``prompt`` and ``tools``; raise a ``VesselError`` on failure."""
        request = self.build_request(prompt=prompt, tools=tools)
        return self.parse_response(self.send(request))

    @abstractmethod
    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        """The provider's request body, built deterministically from the prompt."""

    @abstractmethod
    def send(self, request: dict[str, Any]) -> Any:
        """Deliver ``request`` and return the provider's decoded answer."""

    @abstractmethod
    def parse_response(self, response: Any) -> VesselReply:
        """Turn the provider's answer into a :class:`VesselReply`."""

    def configuration_problem(self) -> str | None:
        """What stops this vessel from being called, in plain words, or ``None``."""
        return None
