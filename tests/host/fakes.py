"""Vessel adapters that misbehave on purpose, for the turn service's failure paths."""

from collections.abc import Sequence
from typing import Any

from webui.prompt import Prompt, ToolCall, ToolDefinition
from webui.vessels.base import VesselAdapter, VesselReply, normalised_usage
from webui.vessels.errors import VesselError


class FailingAdapter(VesselAdapter):
    """Every call fails as an overloaded provider would."""

    adapter_name = "offline"
    requires_api_key = False

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        return {}

    def send(self, request: dict[str, Any]) -> Any:
        raise VesselError(
            "the provider is overloaded; try again in a minute.",
            code="overloaded",
            retryable=True,
            status=529,
            provider_code="overloaded_error",
        )

    def with_json_mode(self, request: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return request

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:  # pragma: no cover
        raise AssertionError


class ToolHungryAdapter(VesselAdapter):
    """Asks for the memory tool on every call and never gives a final answer."""

    adapter_name = "offline"
    requires_api_key = False
    calls = 0

    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        return {"rounds": len(prompt.current_rounds)}

    def send(self, request: dict[str, Any]) -> Any:
        type(self).calls += 1
        return request

    def with_json_mode(self, request: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return request

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        call = ToolCall(
            id=f"call-{response['rounds']}",
            name="memory",
            input={"verb": "recall", "text": "more"},
        )
        return VesselReply(
            text="thinking", tool_calls=(call,), usage=normalised_usage(input_tokens=10)
        )
