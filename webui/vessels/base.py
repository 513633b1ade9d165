"""The contract every vessel adapter fills, in the style of django-anymail's backends.

:meth:`VesselAdapter.complete` is the template method: build the provider's request from the
assembled :class:`~webui.prompt_types.Prompt`, send it, parse the provider's response into a
:class:`VesselReply`.
:meth:`VesselAdapter.complete_structured` is the same with tools off and the provider's JSON mode.
:meth:`VesselAdapter.stream` is the same call with the reply yielded as it arrives (see
:mod:`webui.vessels.streaming`).
:meth:`VesselAdapter.render_conversation` is the one walk over the prompt every adapter's request
is built from; adapters fill its ``render_*`` hooks with their provider's message shapes.
Capability flags are class attributes so callers can ask before they call.
"""

import json
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from webui.models.vessels import api_key_env_problem
from webui.prompt_types import (
    HistoryMessage,
    Prompt,
    ToolDefinition,
    ToolRound,
    ToolUse,
)
from webui.vessels.encoding import EncodedMessage
from webui.vessels.errors import VesselError, unencodable_text_error
from webui.vessels.reply_types import ReplyDone, StreamEvent, TextDelta, reply_lone_surrogate_path
from webui.vessels.reply_types import StructuredReply as StructuredReply
from webui.vessels.reply_types import VesselReply as VesselReply
from webui.vessels.reply_types import normalised_usage as normalised_usage
from webui.vessels.streaming import Framing, StreamParser

if TYPE_CHECKING:
    from webui.models import Vessel

#: One message (or input item, or content turn) in a provider's request.
Message = dict[str, Any]


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


class VesselAdapter(ABC):
    """One provider's way of being called. Subclasses live one per module in this package."""

    #: The ``Vessel.adapter`` value this class serves; the registry files the class under it.
    adapter_name: ClassVar[str]
    #: The provider's name in messages people read.
    provider_name: ClassVar[str] = "The vessel"
    #: Whether the vessel needs an API key from the environment variable named on the vessel.
    requires_api_key: ClassVar[bool] = True
    #: Whether a model judges the replies. ``False`` marks a stand-in (the offline vessel) whose
    #: structured replies are synthetic: valid in shape, but nobody weighed the question.
    reasons: ClassVar[bool] = True
    #: How this adapter reads its provider's streamed response; ``None``: it does not stream, and
    #: :meth:`stream` gives the whole reply as one piece once it has it.
    stream_parser_class: ClassVar[type[StreamParser] | None] = None
    #: Where :meth:`build_request` puts the parts of the prompt, for the cache ledger
    #: (:func:`webui.ledger.recorder.stable_prefix`): the tool definitions, the system text (``None``: it
    #: is the first of the messages, as :meth:`render_system` gives it) and the messages.
    tools_key: ClassVar[str] = "tools"
    system_key: ClassVar[str | None] = "system"
    messages_key: ClassVar[str] = "messages"
    #: Keys of the provider's cache markers (Anthropic's ``cache_control``): where the cache
    #: breaks, not what it holds, so the ledger's hashes leave them out.
    cache_marker_keys: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, vessel: "Vessel") -> None:
        self.vessel = vessel

    def complete(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> VesselReply:
        """Call the vessel once with ``prompt`` and ``tools``; raise a ``VesselError`` on failure."""
        request = self.build_request(prompt=prompt, tools=tools)
        return self.checked_reply(self.send(request), prompt=prompt)

    def checked_reply(self, response: Any, *, prompt: Prompt) -> VesselReply:
        """:meth:`parse_response`, with a response of an unexpected shape, or whose text or tool
        calls hold a lone surrogate (which nothing can store or send on), turned into a clear
        error: the response is not used."""
        with self.response_understood():
            reply = self.parse_response(response, prompt=prompt)
        where = reply_lone_surrogate_path(reply)
        if where:
            raise unencodable_text_error(self.provider_name, where)
        return reply

    @contextmanager
    def response_understood(self) -> Iterator[None]:
        """Reading a response (or a streamed record), with what a response of an unexpected shape
        raises turned into a ``VesselError`` with code ``bad_response``."""
        try:
            yield
        except VesselError:
            raise
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise VesselError(
                f"{self.provider_name} answered in a shape this adapter does not understand "
                f"({type(exc).__name__}: {exc}).",
                code="bad_response",
            ) from exc

    def stream(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> Iterator[StreamEvent]:
        """Call the vessel once, like :meth:`complete`, and yield its reply as it arrives.

        Yields :class:`TextDelta` and :class:`ToolCallStarted` events, then one
        :class:`ReplyDone` with exactly the reply :meth:`complete` gives for the same response
        (after the same checks). A failure raises a ``VesselError``: an error the provider sent
        mid-reply, a broken connection, the deadline. Retries happen only before the first
        event. Closing the iterator early closes the provider's connection at once.

        An adapter streams by naming its :attr:`stream_parser_class` and filling
        :meth:`stream_request` and :meth:`send_stream`; one that does not gives its whole
        reply as one piece of text, once :meth:`complete` has it.
        """
        if self.stream_parser_class is None:
            reply = self.complete(prompt=prompt, tools=tools)
            if reply.text:
                yield TextDelta(reply.text)
            yield ReplyDone(reply)
            return
        parser = self.stream_parser_class(prompt=prompt, provider_name=self.provider_name)
        request = self.stream_request(self.build_request(prompt=prompt, tools=tools))
        records = self.send_stream(request, framing=parser.framing)
        try:
            for record in records:
                with self.response_understood():
                    events = parser.feed(record)
                yield from events
            with self.response_understood():
                response = parser.response()
        finally:
            records.close()
        yield ReplyDone(self.checked_reply(response, prompt=prompt))

    def stream_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """``request`` (from :meth:`build_request`) asking for a streamed response: the same
        request plus only the provider's stream switch (``"stream": true`` unless an adapter says
        otherwise), so its bytes otherwise stay the same."""
        return {**request, "stream": True}

    def send_stream(
        self, request: dict[str, Any], *, framing: Framing
    ) -> Generator[bytes, None, None]:
        """Deliver ``request`` and yield the records of the response (framed as ``framing``) as
        each arrives; closing the generator ends the call."""
        raise NotImplementedError(f"{type(self).__name__} does not stream")

    def complete_structured(
        self, *, prompt: Prompt, schema: dict[str, Any], schema_name: str
    ) -> StructuredReply:
        """Call the vessel with no tools at all and its JSON mode, and parse the JSON object it gives.

        Prose, broken JSON or a JSON value that is not an object raise a ``VesselError`` with code
        ``invalid_json`` that quotes what came back and carries the response's ``usage``.
        """
        request = self.build_request(prompt=prompt, tools=())
        request = self.with_json_mode(request, schema=schema, schema_name=schema_name)
        reply = self.checked_reply(self.send(request), prompt=prompt)
        try:
            data = parse_json_object(reply.text)
        except VesselError as error:
            error.usage = reply.usage  # the wrong reply was still paid for
            raise
        return StructuredReply(data=data, text=reply.text, usage=reply.usage)

    @abstractmethod
    def build_request(self, *, prompt: Prompt, tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        """The provider's request body, built deterministically from the prompt."""

    def with_json_mode(
        self, request: dict[str, Any], *, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        """``request`` asking for a JSON reply that follows ``schema`` (the provider's JSON mode):
        the same request plus :meth:`json_mode_fields`."""
        return {**request, **self.json_mode_fields(request, schema, schema_name)}

    @abstractmethod
    def json_mode_fields(self, request: Message, schema: Message, schema_name: str) -> Message:
        """The top-level fields that switch the provider's JSON mode on for ``schema``."""

    @abstractmethod
    def send(self, request: dict[str, Any]) -> Any:
        """Deliver ``request`` and return the provider's decoded response."""

    @abstractmethod
    def parse_response(self, response: Any, *, prompt: Prompt) -> VesselReply:
        """Turn the provider's response into a :class:`VesselReply`."""

    def render_conversation(self, prompt: Prompt) -> list[Message]:
        """The prompt as the provider's messages, in the fixed order every adapter shares.

        First :meth:`render_system` (for providers that send the system text as a message), then
        the history: each user message, and each assistant turn as its tool rounds followed by its
        final text. Then the newest user message with the per-turn slot, then the tool rounds this
        turn has taken so far. The slot goes in as its own part (its own message where content is a
        plain string) after the newest text, so it drops out next turn without moving a byte of
        what came before it. Each hook returns zero or more messages.
        """
        return [
            *self.render_system(prompt.system_text),
            *self.render_history(prompt.history),
            *self.render_turn(prompt),
        ]

    def render_history(self, history: Sequence[HistoryMessage]) -> list[Message]:
        """The persisted turns: each user message, each assistant turn as its tool rounds then
        its final text. Each stored message is rendered and encoded once per adapter class and
        kept with it (:mod:`webui.vessels.encoding`)."""
        messages: list[Message] = []
        kind = type(self)
        for message in history:
            rendered = message.renderings.get(kind)
            if rendered is None:
                rendered = tuple(
                    EncodedMessage(part, marker_keys=self.cache_marker_keys)
                    for part in self.render_stored(message)
                )
                message.renderings[kind] = rendered
            messages += rendered
        return messages

    def render_stored(self, message: HistoryMessage) -> list[Message]:
        """One persisted message: a user message, or an assistant turn as its tool rounds then
        its final text."""
        if message.role == "user":
            return self.render_user(message.text)
        messages: list[Message] = []
        for tool_round in message.rounds:
            messages += self.render_tool_round(tool_round)
        return messages + self.render_assistant_text(message.text)

    def render_turn(self, prompt: Prompt) -> list[Message]:
        """The turn in progress: the newest user message with the per-turn slot, then the tool
        rounds this turn has taken so far."""
        slot = (slot_text(prompt),) if prompt.turn_slot else ()
        messages = self.render_newest_user(prompt.user_text, slot=slot)
        for tool_round in prompt.current_rounds:
            messages += self.render_tool_round(tool_round)
        return messages

    def render_tool_round(self, tool_round: ToolRound) -> list[Message]:
        """One tool round: the assistant's calls (with any text beside them), then their results."""
        return [
            *self.render_assistant_round(tool_round.text, tool_round.tool_uses),
            *self.render_tool_results(tool_round.tool_uses),
        ]

    def render_system(self, text: str) -> list[Message]:
        """The system text as leading messages; none where the request has a field of its own."""
        return []

    def render_user(self, text: str, *, slot: Sequence[str] = ()) -> list[Message]:
        """A user message: ``text``, then each of ``slot`` as a part of its own. ``slot`` is the
        per-turn slot's text, given with the newest message only and only when the turn has one."""
        raise NotImplementedError(f"{type(self).__name__} does not render messages")

    def render_newest_user(self, text: str, *, slot: Sequence[str]) -> list[Message]:
        """The newest user message, with the per-turn slot; like any user message unless the
        provider marks it (a cache breakpoint, say)."""
        return self.render_user(text, slot=slot)

    def render_assistant_text(self, text: str) -> list[Message]:
        """An assistant turn's final text (which may be empty)."""
        raise NotImplementedError(f"{type(self).__name__} does not render messages")

    def render_assistant_round(self, text: str, tool_uses: Sequence[ToolUse]) -> list[Message]:
        """A round's tool calls as the assistant made them, with the ``text`` it said beside them."""
        raise NotImplementedError(f"{type(self).__name__} does not render messages")

    def render_tool_results(self, tool_uses: Sequence[ToolUse]) -> list[Message]:
        """A round's tool outputs, answering the calls of :meth:`render_assistant_round`."""
        raise NotImplementedError(f"{type(self).__name__} does not render messages")

    def configuration_problem(self) -> str | None:
        """What stops this vessel from being called, in plain words, or ``None``."""
        if self.vessel.api_key_env:
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


def text_part(text: str) -> Message:
    """A text content part in the shape Anthropic and OpenAI Chat share (the offline vessel too)."""
    return {"type": "text", "text": text}


def text_parts_message(role: str, texts: Sequence[str]) -> Message:
    """A ``role`` message whose content is one text part for each of ``texts``."""
    return {"role": role, "content": [text_part(text) for text in texts]}


def bearer_headers(api_key: str) -> dict[str, str]:
    """``Authorization: Bearer`` with ``api_key``, or no header when the vessel has no key (an
    optional key for a local server or a proxy in front of one)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
