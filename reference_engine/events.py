"""What a ``conversation.turn`` event leaves behind: the memories of its ``remember`` tool uses.

Everything is read and checked before anything is kept, so an event the engine refuses changes
nothing.
"""

from dataclasses import dataclass
from typing import Any

from reference_engine.souls import SCOPES


class BadEvent(ValueError):
    """An event that cannot be kept as sent; nothing of it is kept."""


@dataclass(frozen=True)
class NewMemory:
    """A memory to keep (:func:`~.storage.memories.keep_memory`), with who said it and where:
    one a turn event asks for, or one added directly (the memory page, the control door)."""

    text: str
    scope: str
    said_by: dict[str, str] | None
    source: dict[str, str | None]


def text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def event_viewer(conversation: dict[str, Any]) -> dict[str, str] | None:
    """The event's viewer as ``{"member", "name"}``, or None for an unattended run.

    Raises :class:`BadEvent` for a viewer of the wrong shape.
    """
    viewer = conversation.get("viewer")
    if viewer is None:
        return None
    if isinstance(viewer, dict):
        member, name = viewer.get("member"), viewer.get("name")
        if isinstance(member, str) and member and isinstance(name, str):
            return {"member": member, "name": name}
    raise BadEvent('conversation.viewer must be {"member": "<id>", "name": "<name>"} or null')


def remembered_by_event(event: dict[str, Any]) -> list[NewMemory]:
    """The memories the event's ``remember`` tool uses leave, in order.

    A ``remember`` use's ``scope`` is the one the plug-in resolved; with none, the item is
    private to the event's viewer, or household when the run was unattended. In a reply that
    was cut short (``message.stopped``, contract version 3), only the uses that ran (they have
    an output) count. Raises :class:`BadEvent`
    (naming the tool use) for a bad scope, or a private memory in a run with no viewer. Who
    said it (the conversation's viewer) is read only when there is something to keep.
    """
    message = event["message"]
    if not isinstance(message, dict):
        raise BadEvent("message must be an object")
    uses = [
        (index, use)
        for index, use in enumerate(message.get("tool_uses") or [])
        if use.get("name") == "memory"
        and (use.get("input") or {}).get("verb") == "remember"
        and str(use["input"].get("text", "")).strip()
        and (not message.get("stopped") or use.get("output") is not None)
    ]
    if not uses:
        return []  # nothing to keep, so nothing about who said it is needed
    conversation = event["conversation"]
    if not isinstance(conversation, dict):
        raise BadEvent("conversation must be an object")
    viewer = event_viewer(conversation)
    found = []
    for index, use in uses:
        scope = use.get("scope") or ("private" if viewer else "household")
        if scope not in SCOPES:
            raise BadEvent(f"tool_uses[{index}].scope must be one of {list(SCOPES)}")
        if scope == "private" and viewer is None:
            raise BadEvent(f"tool_uses[{index}] is private, but the run has no viewer to own it")
        source = {
            "conversation": text_or_none(conversation.get("id")),
            "message": text_or_none(message.get("id")),
            "tool_use": text_or_none(use.get("id")),
        }
        text = str(use["input"]["text"]).strip()
        found.append(NewMemory(text=text, scope=scope, said_by=viewer, source=source))
    return found
