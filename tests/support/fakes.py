"""Vessel adapters that misbehave on purpose, for the turn service's failure paths."""

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from webui.prompt_types import Prompt, ToolCall, ToolDefinition
from webui.vessels.base import VesselAdapter, VesselReply, normalised_usage
from webui.vessels.errors import VesselError
from webui.vessels.offline import OfflineAdapter
from webui.vessels.reply_types import ReplyDone, StreamEvent, TextDelta, ToolCallStarted


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

    def json_mode_fields(self, request: Any, schema: Any, schema_name: str) -> dict[str, Any]:
        return {}

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

    def json_mode_fields(self, request: Any, schema: Any, schema_name: str) -> dict[str, Any]:
        return {}

    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        call = ToolCall(
            id=f"call-{response['rounds']}",
            name="memory",
            input={"verb": "recall", "text": "more"},
        )
        return VesselReply(
            text="thinking", tool_calls=(call,), usage=normalised_usage(input_tokens=10)
        )


class GatedAdapter(OfflineAdapter):
    """The offline vessel, holding each call until the test opens ``gate``: a turn that is
    surely still running while other requests arrive. ``entered`` is set once a call waits."""

    entered = threading.Event()
    gate = threading.Event()

    @classmethod
    def reset(cls) -> None:
        cls.entered = threading.Event()
        cls.gate = threading.Event()

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        type(self).entered.set()
        assert type(self).gate.wait(timeout=30), "the test never opened the gate"
        return super().send(request)


class PiecewiseAdapter(OfflineAdapter):
    """The offline vessel streaming its reply in pieces of three characters, with its tool calls
    announced before the end, as a streaming provider does."""

    def stream(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> Iterator[StreamEvent]:
        reply = self.complete(prompt=prompt, tools=tools)
        for start in range(0, len(reply.text), 3):
            yield TextDelta(reply.text[start : start + 3])
        for index, call in enumerate(reply.tool_calls):
            yield ToolCallStarted(index=index, id=call.id, name=call.name)
        yield ReplyDone(reply)


class SecondRoundFailsOnce(OfflineAdapter):
    """The offline vessel whose call after a tool round fails the first time (an overloaded
    provider mid-turn), and answers as usual afterwards."""

    failures_left = 1

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["messages"][-1]["role"] == "tool" and type(self).failures_left:
            type(self).failures_left -= 1
            raise VesselError("the provider is overloaded.", code="overloaded", retryable=True)
        return super().send(request)


class ScriptedStreamAdapter(OfflineAdapter):
    """Streams ``pieces`` one by one, running ``between`` (a test's hook) before each piece after
    the first; records whether the consumer closed the stream before its end."""

    pieces: tuple[str, ...] = ("Once ", "upon ", "a time ", "there was tea.")
    between: Any = None
    closed_early = False

    def stream(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> Iterator[StreamEvent]:
        finished = False
        try:
            for index, piece in enumerate(type(self).pieces):
                if index and type(self).between is not None:
                    type(self).between(index)
                yield TextDelta(piece)
            finished = True
            text = "".join(type(self).pieces)
            yield ReplyDone(VesselReply(text=text, usage=normalised_usage(output_tokens=9)))
        finally:
            if not finished:
                type(self).closed_early = True
