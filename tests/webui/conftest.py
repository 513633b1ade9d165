"""Host tests see only the extensions they register themselves, whatever plug-ins are installed."""

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from webui import extensions
from webui.extensions import TurnContext, TurnExtension
from webui.prompt_types import ToolCall, ToolDefinition

RECORDING_TOOL = ToolDefinition(
    name="memory",
    description="A stand-in memory tool for host tests.",
    input_schema={
        "type": "object",
        "properties": {"verb": {"type": "string"}, "text": {"type": "string"}},
        "required": ["verb", "text"],
    },
)


class RecordingTool(TurnExtension):
    """Offers a ``memory`` tool and answers every call with what it was asked."""

    name = "recording-tool"
    offers_memory_tool = True
    memory_tool_name = "memory"

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def tools(self, *, turn: TurnContext) -> list[ToolDefinition]:
        return [RECORDING_TOOL]

    def execute_tool(self, *, turn: TurnContext, call: ToolCall) -> tuple[bool, Any]:
        if call.name != "memory":
            return False, None
        self.calls.append(call)
        # Values that a JSON column changes on the way back (integer keys, a huge float) are in
        # the output on purpose: later turns must still replay this turn's bytes.
        return True, {
            "echo": call.input["text"],
            "verb": call.input["verb"],
            "big": 1e20,
            "ratio": 0.1,
            "order": {10: "ten", 2: "two"},
        }


@pytest.fixture(autouse=True)
def _isolated_extensions() -> Iterator[None]:
    saved = extensions.registered_extensions()
    extensions._registered.clear()
    yield
    extensions._registered[:] = saved


@pytest.fixture
def recording_tool(extension: Callable[[TurnExtension], TurnExtension]) -> RecordingTool:
    return extension(RecordingTool())


@pytest.fixture
def saved_replies() -> Iterator[list[Any]]:
    """Every assistant row created while the test runs, as the turn event's ``post_save`` sees
    it (from any thread: a live server's too)."""
    from django.db.models.signals import post_save

    from webui.models import Message

    saved: list[Any] = []

    def record(sender: type, instance: Any, created: bool, **kwargs: Any) -> None:
        if created and instance.role == Message.Role.ASSISTANT:
            saved.append(instance)

    post_save.connect(record, sender=Message, dispatch_uid="tests.saved_replies")
    yield saved
    post_save.disconnect(sender=Message, dispatch_uid="tests.saved_replies")
