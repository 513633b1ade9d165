"""Who may do what in the memory plug-in: its routes and admin actions walked as anonymous, a
member, staff without permissions, a view-only staff account and a superuser, against the tables
below; then the plug-in's own permissions, each granted alone.

Django's permissions decide, not ``is_staff``: ``view_*`` to read each list (conversation pins show
members' titles, the outbox their turns), ``pippa_memory.repin_conversation`` to re-pin,
``pippa_memory.retry_outboxevent`` to retry or revive events, ``pippa_memory.manage_memory`` to
forget a household memory someone else said or everything one member said. Every account has the
memory page; only the member who said a memory changes its scope or keeps it in every chat. The host's routes are walked in
``tests/webui/web/test_access_walk.py``.
"""

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.db.models import Model
from django.test import Client
from django.utils import timezone

from pippa_memory.models import ConversationPin, OutboxEvent, PinRecord
from tests.support.access_walk import (
    FORBIDDEN,
    LOGIN,
    NOT_FOUND,
    OK,
    PLUGIN,
    READ_ONLY_ADMIN,
    REDIRECT,
    REFUSED_ACTION,
    Access,
    ActionAccess,
    Route,
    admin_model_routes,
    household_wide,
    project_routes,
    registered_actions,
    signed_in,
    walk_actions,
    walk_routes,
)
from tests.support.household_memory import add_memory
from tests.support.plugin_world import PluginWorld, outbox_event
from webui.models import Conversation, Soul

pytestmark = pytest.mark.django_db


UNSIGNED = Access(401, 401, 401, 401, 401)
API = Access(FORBIDDEN, OK, OK, OK, OK)
"""The JSON API past the login: anonymous gets 403 (no login page)."""
MANAGERS_ONLY_API = Access(FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK)
OWN_CHAT_ONLY = Access(FORBIDDEN, OK, NOT_FOUND, NOT_FOUND, NOT_FOUND)
NOBODY_BUT_THE_SAYER = Access(LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN)


def memory(key: str, path: str) -> Any:
    """The URL of one of the world's memories, said by a neighbour none of the roles is."""
    return lambda world, role: path.format(id=world.memories[key])


def memory_page_post(access: Access, key: str, action: str, **fields: str) -> Route:
    """A POST to the memory page's ``action`` on one of the world's memories, for soul pippa."""
    path = memory(key, f"/memory/items/{{id}}/{action}/")
    return Route(access, path, "post", lambda world: {"soul": "pippa", **fields})


"""The brain door answers to its signature alone: no session, staff or superuser, opens it."""

PLUGIN_ROUTES: dict[str, Route] = {
    "brain-door": Route(
        UNSIGNED,
        lambda world, role: "/api/memory/brain/",
        "post",
        lambda world: {"role": "decide", "soul": "pippa", "input": {}},
        json=True,
    ),
    "memory-page": Route(signed_in(member=OK), lambda world, role: "/memory/"),
    # A household memory someone else said: forgotten only by a memory manager.
    "memory-forget": memory_page_post(household_wide(allowed=REDIRECT), "page_forget", "forget"),
    # Its scope is the sayer's alone: a manager may not change it either.
    "memory-scope": memory_page_post(NOBODY_BUT_THE_SAYER, "page_scope", "scope", scope="private"),
    # Keeping it in every chat follows the scope's rule.
    "memory-keep": memory_page_post(NOBODY_BUT_THE_SAYER, "page_keep", "keep", keep="true"),
    # Correcting and restoring follow forgetting's rule: the sayer, or a manager for household.
    "memory-correct": memory_page_post(
        household_wide(allowed=REDIRECT),
        "page_correct",
        "correct",
        text="The neighbour's memory, corrected.",
    ),
    "memory-restore": memory_page_post(household_wide(allowed=REDIRECT), "page_restore", "restore"),
    "memory-add": Route(
        signed_in(member=REDIRECT),
        lambda world, role: "/memory/add/",
        "post",
        lambda world: {"soul": "pippa", "text": "A memory the walk adds.", "scope": "private"},
    ),
    "memory-preference": Route(
        signed_in(member=REDIRECT),
        lambda world, role: "/memory/preference/",
        "post",
        lambda world: {"default_scope": "household"},
    ),
    "memory-member-forget": Route(
        household_wide(allowed=REDIRECT),
        lambda world, role: f"/memory/members/{world.leaver.pk}/forget/",
        "post",
        lambda world: {"soul": "pippa"},
    ),
    "api-memory-items": Route(API, lambda world, role: "/api/memory/items/?soul=pippa"),
    # A member's download: every member downloads what they themselves may see.
    "api-memory-export": Route(API, lambda world, role: "/api/memory/export/?soul=pippa"),
    "api-memory-item": Route(
        MANAGERS_ONLY_API, memory("api_forget", "/api/memory/items/{id}/?soul=pippa"), "delete"
    ),
    # Correcting and restoring follow forgetting's rule, as on the page.
    "api-memory-item-correct": Route(
        MANAGERS_ONLY_API,
        memory("api_correct", "/api/memory/items/{id}/correct/?soul=pippa"),
        "post",
        lambda world: {"text": "The neighbour's memory, corrected by the API."},
        json=True,
    ),
    "api-memory-item-restore": Route(
        MANAGERS_ONLY_API,
        memory("api_restore", "/api/memory/items/{id}/restore/?soul=pippa"),
        "post",
    ),
    # One conversation's memory: its member's alone; anyone else is told there is no such chat.
    "api-memory-conversation": Route(
        OWN_CHAT_ONLY, lambda world, role: f"/api/memory/conversations/{world.conversation.pk}/"
    ),
    "api-memory-conversation-refresh": Route(
        OWN_CHAT_ONLY,
        lambda world, role: f"/api/memory/conversations/{world.conversation.pk}/refresh/",
        "post",
    ),
    "api-memory-member-forget": Route(
        MANAGERS_ONLY_API,
        lambda world, role: f"/api/memory/members/{world.leaver.pk}/forget/?soul=pippa",
        "post",
    ),
    **admin_model_routes("pippa_memory.pinrecord", READ_ONLY_ADMIN, lambda world: world.pin),
    **admin_model_routes("pippa_memory.memoryblock", READ_ONLY_ADMIN, lambda world: world.block),
    **admin_model_routes(
        "pippa_memory.conversationpin", READ_ONLY_ADMIN, lambda world: world.conversation
    ),
    **admin_model_routes("pippa_memory.outboxevent", READ_ONLY_ADMIN, lambda world: world.event),
    **admin_model_routes("pippa_memory.braincall", READ_ONLY_ADMIN, lambda world: world.call),
}

PLUGIN_ACTIONS: dict[tuple[str, str], ActionAccess] = {
    # The confirming step itself, as a crafted POST would send it, not only the question page.
    ("pippa_memory.conversationpin", "repin_at_next_turn"): ActionAccess(
        REFUSED_ACTION, {"confirm": "yes", "reason": "The engine was rebuilt."}
    ),
    ("pippa_memory.outboxevent", "retry_now"): ActionAccess(REFUSED_ACTION),
    ("pippa_memory.outboxevent", "revive_dead"): ActionAccess(REFUSED_ACTION),
}


def plugin_owned(owner: str) -> bool:
    return owner == PLUGIN


def test_every_plugin_route_answers_each_role_as_the_table_says(
    world: PluginWorld, sent_requests: list[Any]
) -> None:
    routes = {key for key, owner in project_routes().items() if plugin_owned(owner)}
    assert routes == set(PLUGIN_ROUTES), "routes missing from or stale in PLUGIN_ROUTES"

    # The brain door writes an audit row for every refused call, by design.
    ignore = ["pippa_memory.braincall"]
    wrong = walk_routes(PLUGIN_ROUTES, world.users, world, sent_requests, ignore)
    assert wrong == [], "\n".join(wrong)


def test_every_plugin_admin_action_runs_only_for_those_with_its_permission(
    world: PluginWorld, make_conversation: Any, soul: Soul, sent_requests: list[Any]
) -> None:
    assert registered_actions(owned_by=plugin_owned) == set(PLUGIN_ACTIONS)

    def target(label: str, action: str) -> Model:
        conversation = make_conversation(viewer=world.users["member"])
        if label == "pippa_memory.conversationpin":
            Conversation.objects.filter(pk=conversation.pk).update(
                pinned_head="r1", pinned_at=timezone.now()
            )
            return ConversationPin.objects.get(pk=conversation.pk)
        return outbox_event(
            soul, conversation, status="dead" if action == "revive_dead" else "pending"
        )

    wrong = walk_actions(PLUGIN_ACTIONS, world.users, target, sent_requests)
    assert wrong == [], "\n".join(wrong)


def staff_holding(make_user: Any, *codenames: str) -> Client:
    account = make_user("-".join(codenames), is_staff=True)
    account.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(account)
    return client


def test_a_repin_needs_the_repin_permission_not_only_a_view(
    make_user: Any, conversation: Conversation
) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(
        pinned_head="r1", pinned_at=timezone.now()
    )
    confirm = {
        "action": "repin_at_next_turn",
        "_selected_action": [conversation.pk],
        "confirm": "yes",
        "reason": "The engine was rebuilt.",
    }
    reader = staff_holding(make_user, "view_conversationpin")
    assert reader.post("/admin/pippa_memory/conversationpin/", confirm).status_code == 200
    assert not PinRecord.objects.exists()

    operator = staff_holding(make_user, "view_conversationpin", "repin_conversation")
    response = operator.post("/admin/pippa_memory/conversationpin/", confirm)

    assert response.status_code == REDIRECT
    assert PinRecord.objects.get().outcome == PinRecord.Outcome.REPIN_REQUESTED


def test_a_retry_needs_the_retry_permission_not_only_a_view(
    make_user: Any, conversation: Conversation, soul: Soul
) -> None:
    event = outbox_event(soul, conversation, status="dead")
    revive = {"action": "revive_dead", "_selected_action": [event.pk]}
    reader = staff_holding(make_user, "view_outboxevent")
    assert reader.post("/admin/pippa_memory/outboxevent/", revive).status_code == 200
    event.refresh_from_db()
    assert event.status == OutboxEvent.Status.DEAD

    operator = staff_holding(make_user, "view_outboxevent", "retry_outboxevent")
    response = operator.post("/admin/pippa_memory/outboxevent/", revive)

    assert response.status_code == REDIRECT
    event.refresh_from_db()
    assert event.status == OutboxEvent.Status.PENDING


def test_forgetting_someone_elses_household_memory_needs_manage_memory_not_only_staff(
    make_user: Any, soul: Soul, memory_on: Any
) -> None:
    item = add_memory(memory_on, "The boiler code is 4471.", by=make_user("neighbour"))
    url = f"/api/memory/items/{item}/?soul=pippa"
    reader = staff_holding(make_user, "view_memberpreference")
    assert reader.delete(url).status_code == FORBIDDEN

    manager = staff_holding(make_user, "manage_memory")

    assert manager.delete(url).status_code == OK
    assert manager.delete(url).status_code == OK  # forgotten already: asked again, a success
