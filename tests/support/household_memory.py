"""Two members' memories in the reference engine, for the memory page's and API's tests."""

import uuid
from typing import Any

import requests
from django.contrib.auth.models import Permission

from reference_engine.server import ReferenceEngine
from tests.support.clients import page_as
from tests.support.engine_token import TOKEN

HEADERS = {"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": "2"}


def said_in_chat() -> dict[str, str | None]:
    """The source of a memory a member said in a chat (ids of a conversation and a message)."""
    return {"conversation": str(uuid.uuid4()), "message": str(uuid.uuid4()), "tool_use": None}


def add_memory(
    engine: ReferenceEngine,
    text: str,
    *,
    scope: str = "household",
    by: Any = None,
    source: dict[str, str] | None = None,
) -> str:
    """Add a memory said by the user ``by`` (None: an unattended run); returns its id. Through
    the control door over the socket, or, with a ``source``, straight into the engine's state
    (the door takes no source)."""
    member = str(by.pk) if by is not None else None
    name = (by.get_full_name() or by.get_username()) if by is not None else None
    if source is not None:
        engine.state.remember("pippa", text, scope=scope, member=member, name=name, source=source)
    else:
        body = {"soul": "pippa", "text": text, "scope": scope, "member": member, "name": name}
        answer = requests.post(
            f"{engine.url}/_control/memories", json=body, headers=HEADERS, timeout=5
        )
        assert answer.status_code == 200, answer.text
    return engine.state.souls["pippa"].memories[-1].id


def head(engine: ReferenceEngine, *, viewer: Any = None) -> dict[str, Any]:
    """The soul's head as ``viewer`` (a user, or None for household only) sees it, in the shape
    the plug-in is answered (contract version 3)."""
    params = {"viewer": str(viewer.pk)} if viewer is not None else {}
    headers = {**HEADERS, "X-Memory-Contract": "3"}
    answer = requests.get(
        f"{engine.url}/v1/souls/pippa/head", params=params, headers=headers, timeout=5
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def recall(engine: ReferenceEngine, query: str, *, viewer: Any) -> list[str]:
    """The texts a recall of ``query`` answers ``viewer``."""
    body = {"soul": "pippa", "query": query, "limit": 20, "viewer": str(viewer.pk)}
    answer = requests.post(f"{engine.url}/v1/recall", json=body, headers=HEADERS, timeout=5)
    assert answer.status_code == 200, answer.text
    return [item["text"] for item in answer.json()["items"]]


def grant_manage_memory(user: Any) -> Any:
    user.user_permissions.add(Permission.objects.get(codename="manage_memory"))
    return type(user).objects.get(pk=user.pk)  # a fresh instance: no cached permissions


def management_calls(engine: ReferenceEngine) -> list[dict[str, Any]]:
    """The engine requests the management side made (listings, members, forgets, scope changes)."""
    return [r for r in engine.received if "/items" in r["path"] or "/members" in r["path"]]


def chat_memory_url(conversation: Any, *, refresh: bool = False) -> str:
    """The API's "Pippa's memory in this chat" for ``conversation`` (or its *bring up to date*)."""
    return f"/api/memory/conversations/{conversation.pk}/" + ("refresh/" if refresh else "")


def memory_page(user: Any, **query: str) -> str:
    """The memory page as ``user`` sees it, asked with ``query``."""
    return page_as(user).get("/memory/", query).content.decode()


def said_in_own_chat(engine: ReferenceEngine, user: Any, conversation: Any) -> str:
    """A memory ``user`` said in their ``conversation`` ("From my chat."); the id of the message
    it came from."""
    message = str(uuid.uuid4())
    source = {"conversation": str(conversation.pk), "message": message}
    add_memory(engine, "From my chat.", by=user, source=source)
    return message
