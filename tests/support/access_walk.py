"""Walking every route and admin action as each kind of account, against an explicit table.

The host's walk (``tests/webui/web/test_access_walk.py``) and the plug-in's
(``tests/pippa_memory/test_access_walk.py``) share this machinery; it never imports the plug-in, so the
host's walk also runs with the plug-in removed. Routes are collected from ``get_resolver()`` and each
is owned by the app whose code answers it, so a new route that no table names fails a walk.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Model
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver

ROLES = ("anonymous", "member", "staff", "viewer", "superuser")
"""anonymous: not logged in. member: a household account with no permission. staff: may enter the
admin but holds no permission. viewer: staff holding every ``view_*`` permission and nothing else.
superuser: holds every permission."""

LOGIN = "redirect to /accounts/login/"
ADMIN_LOGIN = "redirect to /admin/login/"
OK, REDIRECT, FORBIDDEN, NOT_FOUND = 200, 302, 403, 404
REFUSED = {LOGIN, ADMIN_LOGIN, FORBIDDEN, NOT_FOUND, 401, 405}

PLUGIN = "pippa_memory"


@dataclass(frozen=True)
class Access:
    """What each role gets from one request."""

    anonymous: object
    member: object
    staff: object
    viewer: object
    superuser: object

    def of(self, role: str) -> object:
        return getattr(self, role)


def signed_in(*, member: object, staff: object = None, viewer: object = None) -> Access:
    """A page for any logged-in account: anonymous is sent to the login page."""
    return Access(LOGIN, member, staff or member, viewer or member, member)


def household_wide(*, allowed: object) -> Access:
    """A household-wide change: only an account holding the permission (here the superuser)."""
    return Access(LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN, allowed)


def admin_page(*, staff: object, viewer: object, superuser: object) -> Access:
    """An admin page: anyone who is not staff is sent to the admin's login."""
    return Access(ADMIN_LOGIN, ADMIN_LOGIN, staff, viewer, superuser)


@dataclass(frozen=True)
class Route:
    """How to call one route, and what each role must get."""

    access: Access
    url: Callable[[Any, str], str]
    method: str = "get"
    data: Callable[[Any], dict[str, Any]] | None = None
    json: bool = False


# What the superuser gets on each admin page of a model, by kind of page.
FULL_ADMIN = {"changelist": OK, "add": OK, "change": OK, "history": OK, "delete": OK}
READ_ONLY_ADMIN = {**FULL_ADMIN, "add": FORBIDDEN, "delete": FORBIDDEN}
NO_ADD_ADMIN = {**FULL_ADMIN, "add": FORBIDDEN}
NEEDS_OBJECT = {"change", "history", "delete"}


def admin_model_routes(
    label: str, superuser: dict[str, int], instance: Callable[[Any], Model]
) -> dict[str, Route]:
    """The six routes the admin gives a registered model, keyed as ``project_routes`` keys them.

    Staff without permissions are refused every page; the viewer reads (list, detail, history) but
    may not add or delete; the object's bare URL redirects to its change page for any staff.
    """
    app, model = label.split(".")
    base = f"/admin/{app}/{model}/"
    routes: dict[str, Route] = {}
    for kind, allowed in superuser.items():
        viewer = allowed if kind in {"changelist", "change", "history"} else FORBIDDEN
        suffix = {"changelist": "", "add": "add/"}.get(kind, f"{kind}/")

        def url(world: Any, role: str, kind: str = kind, suffix: str = suffix) -> str:
            return base + (f"{instance(world).pk}/" if kind in NEEDS_OBJECT else "") + suffix

        access = admin_page(staff=FORBIDDEN, viewer=viewer, superuser=allowed)
        routes[f"admin:{app}_{model}_{kind}"] = Route(access, url)
    routes[f"admin/{app}/{model}/<path:object_id>/"] = Route(
        admin_page(staff=REDIRECT, viewer=REDIRECT, superuser=REDIRECT),
        lambda world, role: f"{base}{instance(world).pk}/",
    )
    return routes


def make_role_users(make_user: Callable[..., Any]) -> dict[str, Any]:
    """One account per role (``None`` for anonymous)."""
    viewer = make_user("viewer", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return {
        "anonymous": None,
        "member": make_user("member"),
        "staff": make_user("staff", is_staff=True),
        "viewer": get_user_model().objects.get(pk=viewer.pk),
        "superuser": make_user("root", is_staff=True, is_superuser=True),
    }


def client_as(user: Any) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def outcome_of(response: Any) -> object:
    """The status, with a redirect to a login page named as such."""
    if response.status_code == 302:
        location = response["Location"]
        if location.startswith("/accounts/login/"):
            return LOGIN
        if location.startswith("/admin/login/"):
            return ADMIN_LOGIN
    return response.status_code


def household_state(*, calls: list[Any], ignore: Iterable[str] = ()) -> dict[str, Any]:
    """Every row of every model the admin manages, and how many provider calls were made.

    ``last_login`` is left out (logging the walker in sets it); ``ignore`` names audit models that
    record a refused call by design.
    """
    state: dict[str, Any] = {"provider calls": len(calls)}
    for model in admin.site._registry:
        label = model._meta.label_lower
        if label in ignore or model._meta.proxy:
            continue
        rows = model._default_manager.order_by("pk").values()
        state[label] = [{k: v for k, v in row.items() if k != "last_login"} for row in rows]
    return state


def owner_of(pattern: URLPattern) -> str:
    """The label of the app whose code answers ``pattern``."""
    callback = pattern.callback
    model_admin = getattr(callback, "model_admin", None)
    if model_admin is not None:
        module = type(model_admin).__module__
    else:
        module = getattr(callback, "view_class", callback).__module__
    config = apps.get_containing_app_config(module)
    return config.label if config else module


def project_routes() -> dict[str, str]:
    """Every route of the project, keyed by its name (or its pattern when it has none), with its
    owner's app label."""
    found: dict[str, str] = {}

    def walk(patterns: list[Any], prefix: str, namespace: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = ":".join(n for n in (namespace, pattern.namespace) if n)
                walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
            elif pattern.name:
                name = f"{namespace}:{pattern.name}" if namespace else pattern.name
                found[name] = owner_of(pattern)
            else:
                found[prefix + str(pattern.pattern)] = owner_of(pattern)

    walk(get_resolver().url_patterns, "", "")
    return found


def walk_routes(
    table: dict[str, Route],
    users: dict[str, Any],
    world: Any,
    calls: list[Any],
    ignore: Iterable[str] = (),
) -> list[str]:
    """Call every route in ``table`` as every role; the mismatches, in words."""
    wrong: list[str] = []
    for key, route in table.items():
        for role in ROLES:
            client = client_as(users[role])
            before = household_state(calls=calls, ignore=ignore)
            url = route.url(world, role)
            data = route.data(world) if route.data else {}
            send = getattr(client, route.method)
            response = (
                send(url, data, content_type="application/json") if route.json else send(url, data)
            )
            got, expected = outcome_of(response), route.access.of(role)
            if got != expected:
                wrong.append(
                    f"{key} ({route.method.upper()} {url}) as {role}: {got}, not {expected}"
                )
            if got in REFUSED and household_state(calls=calls, ignore=ignore) != before:
                wrong.append(f"{key} as {role} was refused but changed the household")
    return wrong


@dataclass(frozen=True)
class ActionAccess:
    """What each role gets from running one admin action, and whose run takes effect."""

    access: Access
    data: dict[str, Any] = field(default_factory=dict)
    takes_effect_for: frozenset[str] = frozenset({"superuser"})


REFUSED_ACTION = admin_page(staff=FORBIDDEN, viewer=OK, superuser=REDIRECT)
"""Staff without permissions cannot open the list; the viewer is offered no action, so the admin
shows the list again and runs nothing; the superuser's action runs and redirects back."""


def registered_actions(*, owned_by: Callable[[str], bool]) -> set[tuple[str, str]]:
    """``(model label, action name)`` for every action a superuser is offered, on the admins whose
    app ``owned_by`` accepts."""
    request = RequestFactory().get("/admin/")
    request.user = get_user_model()(is_staff=True, is_superuser=True, is_active=True)
    found = set()
    for model, model_admin in admin.site._registry.items():
        if owned_by(type(model_admin).__module__.split(".")[0]):
            for name in model_admin.get_actions(request):
                found.add((model._meta.label_lower, name))
    return found


def walk_actions(
    table: dict[tuple[str, str], ActionAccess],
    users: dict[str, Any],
    target: Callable[[str, str], Model],
    calls: list[Any],
) -> list[str]:
    """Run every action in ``table`` as every role on a fresh ``target(label, action)`` (the
    superuser last); the mismatches, in words. A role not in ``takes_effect_for`` must change nothing."""
    wrong: list[str] = []
    for (label, name), expected in table.items():
        chosen = target(label, name)
        app, model = label.split(".")
        for role in ROLES:
            client = client_as(users[role])
            before = household_state(calls=calls)
            data = {"action": name, "_selected_action": [chosen.pk], **expected.data}
            response = client.post(f"/admin/{app}/{model}/", data)
            got = outcome_of(response)
            if got != expected.access.of(role):
                wrong.append(f"{label} {name} as {role}: {got}, not {expected.access.of(role)}")
            changed = household_state(calls=calls) != before
            if changed != (role in expected.takes_effect_for):
                wrong.append(f"{label} {name} as {role}: {'changed' if changed else 'no change'}")
    return wrong
