"""Named extension points through which a plug-in (such as ``pippa_memory``) reaches the turn.

The host never imports a plug-in. A plug-in subclasses :class:`TurnExtension`, overrides the points
it fills, and registers an instance from its ``AppConfig.ready()``. With no extension registered the
host runs plain chat. Every point receives the :class:`TurnContext` of the turn in progress, whose
:meth:`TurnContext.state` lets an extension carry its own typed state from one point to the next
within one turn.

Only a few points may write or call the network: :meth:`TurnExtension.settle` (before the prompt is
assembled), :meth:`TurnExtension.execute_tool`, :meth:`TurnExtension.turn_saved` and
:meth:`TurnExtension.prepare_unattended`; :meth:`TurnExtension.turn_saving` writes rows in the
reply's own transaction. Assembling the prompt only reads, and so do
:meth:`TurnExtension.message_notes` and :meth:`TurnExtension.health_lines`.
"""

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import transaction

if TYPE_CHECKING:
    from datetime import datetime

    from webui.models import Conversation, Message, UnattendedRun
    from webui.prompt_types import ToolCall, ToolDefinition
    from webui.prune_windows import PruneTarget


State = TypeVar("State")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MessageNote:
    """A line the chat page shows under a message, for the conversation's member only: what rode
    the turn (a background answer), or what its tools could not say yet. Never part of the
    message, its history or any prompt. ``kind`` names it for the page (a CSS class)."""

    kind: str
    text: str


@dataclass(frozen=True)
class HealthLine:
    """One line of the household's health page (:mod:`webui.health`), in a family's words.

    ``state`` is ``ok`` (green), ``warning`` (amber), ``failing`` (red) or ``off`` (grey: switched
    off on purpose). ``sentence`` says how it is; ``what_to_do`` what to do about it, for any
    state but ``ok`` and ``off``. ``details`` are figures for monitoring (the page's JSON): no
    member's words ever. ``key`` names the line for monitoring (``scheduler``, ``engine``).
    """

    key: str
    title: str
    state: str
    sentence: str
    what_to_do: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class TurnContext:
    """The turn in progress: its conversation, the newest user message, and whether it is the first."""

    conversation: "Conversation"
    user_message: "Message"
    first_turn: bool
    states: dict[type, Any] = field(default_factory=dict, repr=False)

    def state(self, kind: type[State]) -> State:
        """This turn's one ``kind`` object, made with ``kind()`` at first use and the same one at
        every later point of the turn. An extension passes a class of its own, so no two
        extensions share state, and a new turn starts with none."""
        if kind not in self.states:
            self.states[kind] = kind()
        return self.states[kind]


class TurnExtension:
    """The contract a plug-in fills. Each method is one named extension point; defaults do nothing.

    The points must not raise for reasons outside the host (a service being down, say): a plug-in is
    absent-tolerant by promise. The host guards the per-turn slot and tool execution anyway.
    """

    #: A short name for logs and error messages.
    name: str = "extension"
    #: Whether this extension offers the memory tool that ``Vessel.memory_tool_enabled`` switches.
    offers_memory_tool: bool = False
    #: The name of that memory tool, so the host's pages can tell when a conversation offers it.
    memory_tool_name: str | None = None

    def settle(self, *, turn: TurnContext) -> str | None:
        """Fix, before the prompt is assembled, what :meth:`memory_block` will read this turn.

        Called at every turn, after the host has pinned the vault base and before it pins the
        viewer disclosure and the tool definitions. This is the point that may write and call the
        network for the front of the prompt: at a conversation's first turn it pins what the block
        holds; at a later turn it may do a documented re-pin (the memory plug-in's
        ``engine_recovered``). It shares the turn's time with the other points, so a slow service
        costs the turn one bounded wait.

        Returns why, when at a later turn it re-pinned (a short cause with no memory text in it,
        such as ``forgotten`` or ``repin: <the admin's reason>``), else ``None``: the cache ledger
        records it as the cause should the block's bytes have moved.
        """
        return None

    def memory_block(self, *, turn: TurnContext) -> str | None:
        """Text placed after the vault base and before the viewer disclosure, or ``None``.

        It only reads what :meth:`settle` fixed: no writes, no network. It must give the same bytes
        on every turn of a conversation: it sits at the front of the prompt, where a change would
        invalidate the vessel's prompt cache for the whole conversation. A deliberate exception
        costs one cache miss and must be documented (the memory plug-in's pin after an engine
        failure, ``engine_recovered``).
        """
        return None

    def turn_slot_parts(self, *, turn: TurnContext) -> list[str]:
        """Parts for this turn's per-turn slot: sent with this turn only, never persisted."""
        return []

    def tools(self, *, turn: TurnContext) -> list["ToolDefinition"]:
        """Tools to offer. Asked once, at the conversation's first turn; the answer is then fixed."""
        return []

    def execute_tool(self, *, turn: TurnContext, call: "ToolCall") -> tuple[bool, Any]:
        """Run ``call`` if this extension owns it: ``(True, output)``, else ``(False, None)``."""
        return False, None

    def turn_saving(self, *, turn: TurnContext, assistant_message: "Message") -> None:
        """Called inside the transaction that saves the assistant row, once it is written: the
        extension's own rows about this reply, which commit with it or not at all. Database
        writes only, no network. A raised error is logged and undone (a savepoint); the reply
        is saved anyway."""

    def turn_saved(self, *, turn: TurnContext, assistant_message: "Message") -> None:
        """Called after the assistant row of the turn has been committed."""

    def message_notes(
        self, *, conversation: "Conversation", messages: Sequence["Message"]
    ) -> dict[str, list[MessageNote]]:
        """Notes to show under some of ``messages`` (all of ``conversation``), by message id as
        text. Only reads; called whenever the conversation's member is shown its messages (the
        page, the messages API, a turn's answer), so it should cost a query or two."""
        return {}

    def prepare_unattended(
        self, *, conversation: "Conversation", run: "UnattendedRun"
    ) -> dict[str, Any]:
        """Before an unattended run's turn: attach what memory it carries (a job's bundle, a wake's
        brief) and return details for the run's record; ``{}`` when this extension has none."""
        return {}

    def memory_status(self) -> str | None:
        """A notice for the household's pages when memory is not working as usual, or ``None``."""
        return None

    def health_lines(self) -> list[HealthLine]:
        """This extension's lines on the health page: its processes and the services it needs.
        Only reads (a short, bounded call to a service is allowed); must not raise for a
        service being down: that is a ``failing`` line."""
        return []

    def prune_targets(self, *, now: "datetime") -> list["PruneTarget"]:
        """This extension's rows past their retention windows at ``now``, for ``manage.py prune``
        (build them with ``webui.prune_windows.targets_past_windows``). Rows that belong to a
        conversation should cascade with it instead. Raise ``webui.prune_windows.RetentionError``
        for a window that cannot be used: the prune then stops before deleting anything."""
        return []


_registered: list[TurnExtension] = []


def register_extension(extension: TurnExtension) -> None:
    """Add ``extension`` to the turn; registering the same class twice replaces the earlier one."""
    _registered[:] = [e for e in _registered if type(e) is not type(extension)]
    _registered.append(extension)


def unregister_extension(extension_class: type[TurnExtension]) -> None:
    """Remove every registered extension of ``extension_class``."""
    _registered[:] = [e for e in _registered if type(e) is not extension_class]


def registered_extensions() -> tuple[TurnExtension, ...]:
    """The registered extensions, in registration order."""
    return tuple(_registered)


def turn_saving(*, turn: TurnContext, assistant_message: "Message") -> None:
    """Each extension's :meth:`TurnExtension.turn_saving`, in the caller's transaction, each in
    a savepoint: one that fails is logged and undone, and the reply is saved anyway."""
    for extension in _registered:
        try:
            with transaction.atomic():
                extension.turn_saving(turn=turn, assistant_message=assistant_message)
        except Exception:
            logger.exception("Extension %s failed while the reply was saved", extension.name)


def message_notes(
    conversation: "Conversation", messages: Sequence["Message"]
) -> dict[str, list[dict[str, str]]]:
    """Every extension's notes under ``messages``, by message id, as ``{"kind", "text"}``. An
    extension that fails adds none (logged): the messages are shown anyway."""
    notes: dict[str, list[dict[str, str]]] = {}
    if not messages:
        return notes
    for extension in _registered:
        try:
            found = extension.message_notes(conversation=conversation, messages=messages)
        except Exception:
            logger.exception("Extension %s failed to give message notes", extension.name)
            continue
        for message_id, extra in found.items():
            notes.setdefault(str(message_id), []).extend(asdict(note) for note in extra)
    return notes


def health_lines() -> list[HealthLine]:
    """Every extension's health lines, in registration order. One that fails gives a failing
    line naming it (logged), and the others are shown anyway."""
    lines: list[HealthLine] = []
    for extension in _registered:
        try:
            lines.extend(extension.health_lines())
        except Exception as error:
            logger.exception("Extension %s failed to give its health lines", extension.name)
            lines.append(
                HealthLine(
                    key=extension.name,
                    title=extension.name,
                    state="failing",
                    sentence=f"Its health could not be read ({type(error).__name__}).",
                    what_to_do="Read the web server's log for the error.",
                )
            )
    return lines


def memory_tool_notice() -> str | None:
    """Why the vessels' memory-tool switches cannot take effect now, or ``None`` when they can."""
    extensions = [e for e in _registered if e.offers_memory_tool]
    if not extensions:
        return "No memory plug-in is installed, so the memory tool switches have no effect."
    for extension in extensions:
        notice = extension.memory_status()
        if notice:
            return notice
    return None
