"""The contract every vessel adapter fills, in the style of django-anymail's backends.

:meth:`VesselAdapter.complete` is the template method: build the provider's request from the
assembled :class:`~webui.prompt.Prompt`, send it, parse the answer into a :class:`VesselReply`.
:meth:`VesselAdapter.complete_structured` is the same with tools off and the provider's JSON mode.
Capability flags are class attributes so callers can ask before they call.
"""

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from webui.lone_surrogates import lone_surrogate_path
from webui.prompt import Prompt, ToolCall, ToolDefinition
from webui.vessels.errors import VesselError

if TYPE_CHECKING:
    from webui.models import Vessel


def normalised_usage(
    *, input_tokens: int = 0, output_tokens: int = 0, cached_input_tokens: int = 0
) -> dict[str, int]:
    """Usage in the one shape the host stores, whatever the provider called its fields.

    ``input_tokens`` is the whole prompt, cached part included; ``cached_input_tokens`` is the part
    the provider read from its prompt cache.
    """
    return {
        "input_tokens": int(input_tokens or 0),
        "output_tokens": int(output_tokens or 0),
        "cached_input_tokens": int(cached_input_tokens or 0),
    }


def derived_call_id(prompt: Prompt, index: int) -> str:
    """A stable id for a tool call whose provider gave none (Ollama, older Gemini models).

    Made from the newest user message id, the round and the call's index, so the same call gets
    the same id when the turn is replayed later.
    """
    seed = f"{prompt.user_message_id}:{len(prompt.current_rounds)}:{index}"
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:24]


def parse_json_arguments(arguments: Any) -> dict[str, Any]:
    """Tool arguments as an object, whether the provider sent an object or a JSON string.

    Arguments that are not a JSON object are kept under ``_unparsed`` so the tool can say what is
    wrong instead of the turn failing.
    """
    if isinstance(arguments, dict):
        return arguments
    if arguments in (None, ""):
        return {}
    try:
        parsed = json.loads(arguments)
    except (TypeError, ValueError):
        return {"_unparsed": arguments}
    return parsed if isinstance(parsed, dict) else {"_unparsed": arguments}


@dataclass(frozen=True)
class VesselReply:
    """What one vessel call gave back: text, tool calls (possibly both) and normalised usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: dict[str, int] = field(default_factory=normalised_usage)


def reply_lone_surrogate_path(reply: VesselReply) -> str | None:
    """Where ``reply``'s text or tool calls hold a lone surrogate ("its text", "tool call 0
    (input/query)"), or ``None``."""
    if lone_surrogate_path(reply.text):
        return "its text"
    for index, call in enumerate(reply.tool_calls):
        found = lone_surrogate_path({"id": call.id, "name": call.name, "input": call.input})
        if found:
            return f"tool call {index} ({found})"
    return None


@dataclass(frozen=True)
class StructuredReply:
    """A structured-mode answer: the parsed JSON object, the text it came from, and usage."""

    data: dict[str, Any]
    text: str
    usage: dict[str, int]


class VesselAdapter(ABC):
    """One provider's way of being called. Subclasses live one per module in this package."""

    #: The ``Vessel.adapter`` value this class serves.
    adapter_name: ClassVar[str]
    #: The provider's name in messages people read.
    provider_name: ClassVar[str] = "The vessel"
    #: Whether the vessel needs an API key from the environment variable named on the vessel.
    requires_api_key: ClassVar[bool] = True
    #: Whether the adapter can offer tools to the model.
    supports_tools: ClassVar[bool] = True
    #: Whether a model judges the answers. ``False`` marks a stand-in (the offline vessel) whose
    #: structured answers are synthetic: valid in shape, but nobody weighed the question.
    reasons: ClassVar[bool] = True

    def __init__(self, vessel: "Vessel") -> None:
        self.vessel = vessel

    def complete(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> VesselReply:
        """Call the vessel once with ``prompt`` and ``tools``; raise a ``VesselError`` on failure."""
        request = self.build_request(prompt=prompt, tools=tools)
        return self.parse_answer(self.send(request), prompt=prompt)

    def parse_answer(self, response: Any, *, prompt: Prompt) -> VesselReply:
        """:meth:`parse_response`, with an answer of an unexpected shape, or whose text or tool
        calls hold a lone surrogate (which nothing can store or send on), turned into a clear
        error: the answer is not used."""
        try:
            reply = self.parse_response(response, prompt=prompt)
        except VesselError:
            raise
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise VesselError(
                f"{self.provider_name} answered in a shape this adapter does not understand "
                f"({type(exc).__name__}: {exc}).",
                code="bad_response",
            ) from exc
        where = reply_lone_surrogate_path(reply)
        if where:
            raise VesselError(
                f"{self.provider_name} answered with text that is not valid Unicode (a lone "
                f"surrogate) in {where}; the answer was not used.",
                code="unencodable_text",
            )
        return reply

    def complete_structured(
        self, *, prompt: Prompt, schema: dict[str, Any], schema_name: str
    ) -> StructuredReply:
        """Call the vessel with no tools at all and its JSON mode, and parse the JSON object it gives.

        Prose, broken JSON or a JSON value that is not an object raise a ``VesselError`` with code
        ``invalid_json`` that quotes what came back and carries the answer's ``usage``.
        """
        request = self.build_request(prompt=prompt, tools=())
        request = self.with_json_mode(request, schema=schema, schema_name=schema_name)
        reply = self.parse_answer(self.send(request), prompt=prompt)
        try:
            data = parse_json_object(reply.text)
        except VesselError as error:
            error.usage = reply.usage  # the wrong answer was still paid for
            raise
        return StructuredReply(data=data, text=reply.text, usage=reply.usage)

    @abstractmethod
    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        """The provider's request body, built deterministically from the prompt."""

    @abstractmethod
    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        """``request`` asking for a JSON answer that follows ``schema`` (the provider's JSON mode)."""

    @abstractmethod
    def send(self, request: dict[str, Any]) -> Any:
        """Deliver ``request`` and return the provider's decoded answer."""

    @abstractmethod
    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        """Turn the provider's answer into a :class:`VesselReply`."""

    def configuration_problem(self) -> str | None:
        """What stops this vessel from being called, in plain words, or ``None``."""
        if self.vessel.api_key_env:
            from webui.models import api_key_env_problem

            problem = api_key_env_problem(self.vessel.api_key_env)
            if problem:
                return f"The vessel {self.vessel.name} cannot use its key variable: {problem}"
        if self.requires_api_key and not self.vessel.api_key:
            if not self.vessel.api_key_env:
                return (
                    f"The vessel {self.vessel.name} needs an API key: name the environment "
                    "variable that holds it in the vessel's settings."
                )
            return (
                f"The vessel {self.vessel.name} needs an API key in the environment variable "
                f"{self.vessel.api_key_env}, which is not set."
            )
        return None


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``; a ``VesselError`` quoting the text when there is none."""
    stripped = text.strip()
    if stripped.startswith("```"):
        # Some models fence JSON even in JSON mode; the fence is packaging, not content.
        stripped = stripped.strip("`").removeprefix("json").strip()
    snippet = text if len(text) <= 300 else text[:300] + "…"
    try:
        data = json.loads(stripped)
    except ValueError as exc:
        raise VesselError(
            f"The vessel was asked for JSON but answered with something else ({exc.msg}): {snippet!r}",
            code="invalid_json",
        ) from exc
    if not isinstance(data, dict):
        raise VesselError(
            f"The vessel was asked for a JSON object but answered with {type(data).__name__}: "
            f"{snippet!r}",
            code="invalid_json",
        )
    return data


def slot_text(prompt: Prompt) -> str:
    """The per-turn slot as one text part ("" when empty)."""
    return "\n\n".join(prompt.turn_slot)


def prompt_items(prompt: Prompt) -> list[tuple[str, Any]]:
    """The conversation after the system text, in order, for an adapter to render.

    Items are ``("user", text)``, ``("round", ToolRound)`` (a vessel call that asked for tools, with
    the results), ``("assistant", text)`` and, once, ``("newest", text)`` for the newest user message;
    the current turn's rounds follow it. Adapters add the per-turn slot to the newest message.
    """
    items: list[tuple[str, Any]] = []
    for message in prompt.history:
        if message.role == "user":
            items.append(("user", message.text))
            continue
        items.extend(("round", tool_round) for tool_round in message.rounds)
        items.append(("assistant", message.text))
    items.append(("newest", prompt.user_text))
    items.extend(("round", tool_round) for tool_round in prompt.current_rounds)
    return items
