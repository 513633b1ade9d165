"""Who may do what on the host: every route and every admin action, walked as anonymous, a member,
staff without permissions, a view-only staff account and a superuser, against the table below.

Household-wide changes (the memory tool switch, Test connection, waking a soul) need a Django
permission, not a login or ``is_staff``; the admin decides by Django's model permissions. Routes and
actions owned by the memory plug-in are walked in ``tests/pippa_memory/test_access_walk.py``.
"""

from itertools import count
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.utils import timezone

from tests.support.access_walk import (
    ADMIN_LOGIN,
    FORBIDDEN,
    FULL_ADMIN,
    LOGIN,
    NO_ADD_ADMIN,
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
    admin_page,
    household_wide,
    project_routes,
    registered_actions,
    signed_in,
    walk_actions,
    walk_routes,
)
from tests.support.factory_defaults import DEMO_VAULT
from tests.support.host_world import LOGIN_RECORD, HostWorld
from webui.models import (
    Conversation,
    DailyChore,
    ScheduledJob,
    Soul,
    UnattendedRun,
    Vessel,
)

pytestmark = pytest.mark.django_db


def own(path: str) -> Any:
    return lambda world, role: path.format(id=world.conversation(role).id)


def at(path: str) -> Any:
    return lambda world, role: path


API = Access(FORBIDDEN, OK, OK, OK, OK)
"""The JSON API: any logged-in account, on its own conversations; anonymous gets 403 (no login page)."""

HOST_ROUTES: dict[str, Route] = {
    "conversation-list": Route(signed_in(member=OK), at("/")),
    "conversation-new": Route(signed_in(member=OK), at("/conversations/new/")),
    "conversation-detail": Route(signed_in(member=OK), own("/conversations/{id}/")),
    # Renaming one's own conversation, and the page that asks before deleting it (the delete
    # itself, and that no one reaches another member's, is in tests/webui/web/test_conversations.py).
    "conversation-rename": Route(
        signed_in(member=REDIRECT),
        own("/conversations/{id}/rename/"),
        "post",
        lambda world: {"title": "Renamed"},
    ),
    "conversation-delete": Route(signed_in(member=OK), own("/conversations/{id}/delete/")),
    # Moving one's own chat to another model (to the one it is on already: refused, back to it).
    "conversation-move": Route(
        signed_in(member=REDIRECT),
        own("/conversations/{id}/model/"),
        "post",
        lambda world: {"vessel": world.vessel.pk},
    ),
    "vessel-list": Route(signed_in(member=OK), at("/vessels/")),
    "soul-stream": Route(signed_in(member=OK), at("/stream/")),
    # The cache bill: staff who may view the ledger (the viewer and the superuser); 403 otherwise.
    "cache-ledger": Route(Access(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK), at("/cache/")),
    # The health page and its JSON: any staff account; the load balancer's /health/: anyone.
    "health-page": Route(Access(LOGIN, FORBIDDEN, OK, OK, OK), at("/status/")),
    "health-json": Route(Access(LOGIN, FORBIDDEN, OK, OK, OK), at("/status.json")),
    "health": Route(Access(OK, OK, OK, OK, OK), at("/health/")),
    "soul-stream-wake": Route(
        household_wide(allowed=REDIRECT),
        at("/stream/wake/"),
        "post",
        lambda world: {"soul": world.soul.pk},
    ),
    "vessel-memory-tool": Route(
        household_wide(allowed=REDIRECT),
        lambda world, role: f"/vessels/{world.vessel.slug}/memory-tool/",
        "post",
        lambda world: {"memory_tool_enabled": ""},
    ),
    "vessel-test-connection": Route(
        household_wide(allowed=REDIRECT),
        lambda world, role: f"/vessels/{world.vessel.slug}/test/",
        "post",
    ),
    # Browsers ask for it whatever the page links: everyone is sent to the site's icon.
    "favicon": Route(Access(REDIRECT, REDIRECT, REDIRECT, REDIRECT, REDIRECT), at("/favicon.ico")),
    "login": Route(Access(OK, OK, OK, OK, OK), at("/accounts/login/")),
    "logout": Route(Access(LOGIN, LOGIN, LOGIN, LOGIN, LOGIN), at("/accounts/logout/"), "post"),
    # A member's own account page and Django's own password change, for any logged-in account.
    "account": Route(signed_in(member=OK), at("/accounts/")),
    "password_change": Route(signed_in(member=OK), at("/accounts/password_change/")),
    "api-conversations": Route(API, at("/api/conversations/")),
    "api-conversation": Route(API, own("/api/conversations/{id}/")),
    "api-messages": Route(API, own("/api/conversations/{id}/messages/")),
    # Nothing to retry in a fresh conversation: past the login, the API says so (409).
    "api-retry": Route(
        Access(FORBIDDEN, 409, 409, 409, 409),
        own("/api/conversations/{id}/retry/"),
        "post",
        lambda world: {},
        json=True,
    ),
    # No turn is running in a fresh conversation: past the login, stopping one is a 409.
    "api-stop": Route(
        Access(FORBIDDEN, 409, 409, 409, 409),
        own("/api/conversations/{id}/stop/"),
        "post",
        lambda world: {"turn_id": "6f1d2c1e-0000-4000-8000-000000000000"},
        json=True,
    ),
    # The cache ledger: staff holding view_vesselcall (the viewer, the superuser); members and
    # staff without it are refused, anonymous too (403, as the API refuses everyone unsigned).
    "api-ledger": Route(
        Access(FORBIDDEN, FORBIDDEN, FORBIDDEN, OK, OK),
        lambda world, role: f"/api/ledger/?conversation={world.conversations['member'].id}",
    ),
    "api-schema": Route(API, at("/api/schema/")),
    "api-docs": Route(API, at("/api/docs/")),
    "admin:index": Route(admin_page(staff=OK, viewer=OK, superuser=OK), at("/admin/")),
    "admin:login": Route(Access(OK, OK, REDIRECT, REDIRECT, REDIRECT), at("/admin/login/")),
    # Not staff: sent to the admin's index (and from there to its login); staff: logged out.
    "admin:logout": Route(
        Access(REDIRECT, REDIRECT, LOGIN, LOGIN, LOGIN), at("/admin/logout/"), "post"
    ),
    "admin:password_change": Route(
        admin_page(staff=OK, viewer=OK, superuser=OK), at("/admin/password_change/")
    ),
    "admin:password_change_done": Route(
        admin_page(staff=OK, viewer=OK, superuser=OK), at("/admin/password_change/done/")
    ),
    # Without its query the autocomplete refuses everyone; with one, the model's view permission.
    "admin:autocomplete": Route(
        admin_page(staff=FORBIDDEN, viewer=FORBIDDEN, superuser=FORBIDDEN),
        at("/admin/autocomplete/"),
    ),
    "admin:jsi18n": Route(admin_page(staff=OK, viewer=OK, superuser=OK), at("/admin/jsi18n/")),
    "admin:view_on_site": Route(
        admin_page(staff=REDIRECT, viewer=REDIRECT, superuser=REDIRECT),
        lambda world, role: (
            f"/admin/r/{ContentType.objects.get_for_model(Conversation).pk}/"
            f"{world.conversation(role).pk}/"
        ),
    ),
    "admin:app_list": Route(
        admin_page(staff=NOT_FOUND, viewer=OK, superuser=OK), at("/admin/webui/")
    ),
    "admin/(?P<url>.*)$": Route(
        Access(ADMIN_LOGIN, ADMIN_LOGIN, NOT_FOUND, NOT_FOUND, NOT_FOUND),
        at("/admin/no-such-page/"),
    ),
    "admin:auth_user_password_change": Route(
        admin_page(staff=FORBIDDEN, viewer=FORBIDDEN, superuser=OK),
        lambda world, role: f"/admin/auth/user/{world.users['member'].pk}/password/",
    ),
    **admin_model_routes("auth.group", FULL_ADMIN, lambda world: world.group),
    **admin_model_routes("auth.user", FULL_ADMIN, lambda world: world.users["member"]),
    **admin_model_routes("webui.soul", FULL_ADMIN, lambda world: world.soul),
    **admin_model_routes("webui.vessel", FULL_ADMIN, lambda world: world.vessel),
    **admin_model_routes(
        "webui.conversation", FULL_ADMIN, lambda world: world.conversations["member"]
    ),
    # History is written by turns: messages and vault snapshots are read, never added, changed or
    # deleted (a conversation is deleted whole).
    **admin_model_routes("webui.message", READ_ONLY_ADMIN, lambda world: world.message),
    **admin_model_routes("webui.vaultsnapshot", READ_ONLY_ADMIN, lambda world: world.snapshot),
    **admin_model_routes("webui.scheduledjob", FULL_ADMIN, lambda world: world.job),
    **admin_model_routes("webui.unattendedrun", NO_ADD_ADMIN, lambda world: world.run),
    **admin_model_routes("webui.dailychore", NO_ADD_ADMIN, lambda world: world.chore),
    # The cache ledger: written by turns, read only for everyone.
    **admin_model_routes("webui.vesselcall", READ_ONLY_ADMIN, lambda world: world.vessel_call),
    # A member's moves of a chat to another model: written by the member's page, read only.
    **admin_model_routes("webui.vesselmove", READ_ONLY_ADMIN, lambda world: world.vessel_move),
    # django-axes' records of failed logins: read and delete by model permission, never added.
    **admin_model_routes("axes.accessattempt", NO_ADD_ADMIN, lambda world: world.login_attempt),
    **admin_model_routes("axes.accesslog", NO_ADD_ADMIN, lambda world: world.login_log),
    **admin_model_routes("axes.accessfailurelog", NO_ADD_ADMIN, lambda world: world.login_failure),
}

DELETE = ActionAccess(REFUSED_ACTION, {"post": "yes"})
HOST_ACTIONS: dict[tuple[str, str], ActionAccess] = {
    ("auth.group", "delete_selected"): DELETE,
    ("auth.user", "delete_selected"): DELETE,
    ("webui.soul", "delete_selected"): DELETE,
    ("webui.vessel", "delete_selected"): DELETE,
    # One small real provider call: for those who may change vessels, not for a viewer.
    ("webui.vessel", "run_connection_test"): ActionAccess(REFUSED_ACTION),
    ("webui.conversation", "delete_selected"): DELETE,
    ("webui.scheduledjob", "delete_selected"): DELETE,
    ("webui.unattendedrun", "delete_selected"): DELETE,
    ("webui.dailychore", "delete_selected"): DELETE,
    ("axes.accessattempt", "delete_selected"): DELETE,
    ("axes.accesslog", "delete_selected"): DELETE,
    ("axes.accessfailurelog", "delete_selected"): DELETE,
}


def host_owned(owner: str) -> bool:
    return owner != PLUGIN


def test_every_host_route_answers_each_role_as_the_table_says(
    world: HostWorld, sent_requests: list[Any]
) -> None:
    routes = {key for key, owner in project_routes().items() if host_owned(owner)}
    assert routes == set(HOST_ROUTES), "routes missing from or stale in HOST_ROUTES"

    wrong = walk_routes(HOST_ROUTES, world.users, world, sent_requests)
    assert wrong == [], "\n".join(wrong)


def test_every_host_admin_action_runs_only_for_those_with_its_permission(
    world: HostWorld, sent_requests: list[Any]
) -> None:
    assert registered_actions(owned_by=host_owned) == set(HOST_ACTIONS)
    serial = count()

    def target(label: str, action: str) -> Model:
        n = next(serial)
        return {
            "auth.group": lambda: Group.objects.create(name=f"target-{n}"),
            "auth.user": lambda: get_user_model().objects.create_user(f"target-{n}"),
            "webui.soul": lambda: Soul.objects.create(
                slug=f"target-{n}", name="Target", vault_path=DEMO_VAULT
            ),
            "webui.vessel": lambda: Vessel.objects.create(
                slug=f"target-{n}", name="Target", adapter="offline", model="offline-1"
            ),
            "webui.conversation": lambda: Conversation.objects.create(
                soul=world.soul, vessel=world.vessel, viewer=world.users["member"]
            ),
            "webui.scheduledjob": lambda: ScheduledJob.objects.create(
                name=f"target-{n}", soul=world.soul, vessel=world.vessel, schedule="every 1d"
            ),
            "webui.unattendedrun": lambda: UnattendedRun.objects.create(
                kind="wake", soul=world.soul
            ),
            "webui.dailychore": lambda: DailyChore.objects.create(
                name=f"target-{n}", last_day=timezone.localdate()
            ),
            "axes.accessattempt": lambda: AccessAttempt.objects.create(
                **{**LOGIN_RECORD, "username": f"target-{n}"},
                get_data="",
                post_data="",
                failures_since_start=1,
            ),
            "axes.accesslog": lambda: AccessLog.objects.create(
                **{**LOGIN_RECORD, "username": f"target-{n}"}
            ),
            "axes.accessfailurelog": lambda: AccessFailureLog.objects.create(
                **{**LOGIN_RECORD, "username": f"target-{n}"}
            ),
        }[label]()

    wrong = walk_actions(HOST_ACTIONS, world.users, target, sent_requests)
    assert wrong == [], "\n".join(wrong)
