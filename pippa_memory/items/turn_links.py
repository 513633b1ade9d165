"""Links from a memory item to the turn it came from, for the member whose conversation it is."""

import uuid

from django.contrib.auth.models import AbstractBaseUser

from pippa_memory.items.services import MemoryItem
from webui.web.selectors import conversations_for


def _as_uuid(text: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(text)) if text else None
    except ValueError:
        return None


def own_turn_urls(*, user: AbstractBaseUser, items: list[MemoryItem]) -> dict[str, str]:
    """For each item that came from one of ``user``'s own chats, by item id: the URL of that
    conversation, at the message (``#message-<id>``) when the engine knows it. One query."""
    wanted = {item.id: _as_uuid(item.conversation) for item in items}
    ids = {conversation for conversation in wanted.values() if conversation}
    own = {
        conversation.pk: conversation.get_absolute_url()
        for conversation in conversations_for(user).filter(pk__in=ids).only("id")
    }
    urls = {}
    for item in items:
        conversation = wanted[item.id]
        if conversation in own:
            message = _as_uuid(item.message)
            urls[item.id] = own[conversation] + (f"#message-{message}" if message else "")
    return urls
