"""Who a memory belongs to: a household member as the engine knows them (engine contract v2).

A member's stable id is the Django user's primary key as a string; their name is what they go by.
A conversation's *viewer* is its member, or nobody for an unattended run (a job or a wake), which
sees household items only and whose memories are always the household's.
"""

from typing import Any
from urllib.parse import urlencode

from pippa_memory.models import MemberPreference, Scope
from webui.models import Conversation


def member_id(user: Any) -> str:
    """The member's stable id at the engine: the user's primary key as a string (``"7"``)."""
    return str(user.pk)


def member_name(user: Any) -> str:
    """The name the member goes by: their full name, else their username."""
    return user.get_full_name() or user.get_username()


def viewer_id(conversation: Conversation) -> str | None:
    """The id of the member ``conversation`` is for, or ``None`` for an unattended run. Read from
    the row's own column, so it costs no query."""
    viewer = conversation.viewer_id
    return str(viewer) if viewer is not None else None


def viewer_of(conversation: Conversation) -> dict[str, str] | None:
    """The turn event's ``conversation.viewer``: ``{"member", "name"}``, or ``None`` unattended."""
    viewer = conversation.viewer
    if viewer is None:
        return None
    return {"member": member_id(viewer), "name": member_name(viewer)}


def viewer_query(conversation: Conversation) -> str:
    """The ``?viewer=<id>`` a per-viewer read carries; empty (household only) when unattended."""
    viewer = viewer_id(conversation)
    return f"?{urlencode({'viewer': viewer})}" if viewer is not None else ""


def resolved_scope(conversation: Conversation, *, asked: str | None) -> str:
    """The scope a ``remember`` in ``conversation`` gets: ``household`` always for an unattended
    run (no member could own a private item); else the scope the model ``asked`` for; else the
    member's own default (:class:`~pippa_memory.models.MemberPreference`), ``private`` unless
    they chose otherwise."""
    if conversation.viewer_id is None:
        return Scope.HOUSEHOLD.value
    if asked is not None:
        return Scope(asked).value
    preference = (
        MemberPreference.objects.filter(user_id=conversation.viewer_id)
        .values_list("default_scope", flat=True)
        .first()
    )
    return Scope(preference or Scope.PRIVATE).value


def may_see(viewer: str | None, item: dict[str, Any]) -> bool:
    """Whether a member (``None``: an unattended run) may see an engine item: every household
    item, and a private item only when that member said it. The engine enforces this; the plug-in
    checks again, since a private memory reaching another member is a defect on any path."""
    if item.get("scope") == Scope.HOUSEHOLD:
        return True
    said_by = item.get("said_by") or {}
    return viewer is not None and said_by.get("member") == viewer
