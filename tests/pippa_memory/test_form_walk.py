"""A walk over every form of the site, found as a browser finds it (links followed from the
conversation list, the login page as a visitor), each field in turn posted with a NUL, a lone
surrogate (raw percent-encoded bytes, since no UTF-8 text can hold one) and a 100 kB value, with
CSRF checks on as a browser meets them. No answer is a server error; a NUL or a surrogate is a
400 in the site's shape and changes nothing; a 100 kB value is refused with a validation error a
person can read, and never stored. A NUL in a header a member can set is a 400 too. On SQLite and
PostgreSQL alike (the suite's ``DATABASE_URL``)."""

from typing import Any

import pytest
from django.apps import apps
from django.test import Client

from reference_engine.server import ReferenceEngine
from tests.support.factory_defaults import PASSWORD
from tests.support.form_walk import Form, encoded, walk_pages
from tests.support.household_memory import add_memory
from webui.models import Conversation

pytestmark = pytest.mark.django_db(transaction=True)

BIG = "x" * 100_000
BAD_VALUES: dict[str, str | bytes] = {"nul": "a\x00b", "surrogate": b"a%ED%A0%80b", "big": BIG}
#: What a person would type in a field the page leaves empty, so the bad field is the only fault.
TYPED = {"username": "alice", "password": PASSWORD, "title": "A fine title", "q": "tea"}
#: The chat page's send box is sent by its script as JSON to the API (the schemathesis run's).
SCRIPTED_FORMS = {"send"}
#: Headers a member's browser sends and a member can set by hand.
MEMBER_HEADERS = (
    "HTTP_USER_AGENT",
    "HTTP_REFERER",
    "HTTP_ACCEPT_LANGUAGE",
    "HTTP_X_REQUESTED_WITH",
)
#: Every form action the walk must reach (route prefixes), so a page it misses fails the test.
EXPECTED_ACTIONS = {
    "/accounts/login/",
    "/accounts/logout/",
    "/conversations/new/",
    "rename/",
    "delete/",
    "/stream/wake/",
    "memory-tool/",
    "/test/",
    "/memory/preference/",
    "/scope/",
    "/forget/",
    "/memory/members/",
    "/memory/",
    "/",
}


def stored_rows() -> dict[str, list[dict[str, Any]]]:
    """Every row of the site's own tables and its members, to compare before and after."""
    models = [
        *apps.get_app_config("webui").get_models(),
        *apps.get_app_config("pippa_memory").get_models(),
        apps.get_model("auth", "User"),
    ]
    return {
        model._meta.label: sorted(model.objects.values(), key=lambda row: str(row["id"]))
        for model in models
        if model._meta.label != "webui.Cache" and "id" in {f.name for f in model._meta.fields}
    }


def holds_big_text(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    return [
        label
        for label, table in rows.items()
        for row in table
        if any(isinstance(value, str) and BIG[:1000] in value for value in row.values())
    ]


def submit(client: Client, form: Form, pairs: list[tuple[str, str | bytes]], **headers: str) -> Any:
    body = encoded(pairs)
    if form.method == "GET":
        return client.get(f"{form.action}?{body}", **headers)
    return client.generic(
        "POST", form.action, body, content_type="application/x-www-form-urlencoded", **headers
    )


def assert_site_shaped_400(answer: Any, form: Form, kind: str) -> None:
    assert answer.status_code == 400, (form.label, kind, answer.status_code, answer.content[:300])
    assert answer["Content-Type"].startswith("text/html"), form.label
    words = b"NUL character" if kind == "nul" else b"not UTF-8"
    assert words in answer.content, (form.label, answer.content[:300])


def assert_refused_readably(client: Client, answer: Any, form: Form, name: str) -> None:
    """A too-long value: a 4xx page, or the form again (or the page it redirects to) saying
    what was wrong."""
    if answer.status_code in (302, 303):
        answer = client.get(answer["Location"])
    assert answer.status_code < 500, (form.label, name, answer.status_code)
    if answer.status_code >= 400:
        return
    page = answer.content.decode()
    shown = ('class="notice error"', 'class="errorlist', 'role="alert"')
    assert any(mark in page for mark in shown), (form.label, name, answer.status_code)


def walk_one_form(client: Client, form: Form, *, headers: bool) -> None:
    """Each field of ``form`` with each bad value (and, with ``headers``, each member-set header
    with a NUL); the rest of the form as the page filled it in."""
    base = [(name, value or TYPED.get(name, "")) for name, _, value in form.fields]
    kinds = {name: kind for name, kind, _ in form.fields}
    before = stored_rows()
    for index, (name, _) in enumerate(base):
        for bad_kind, bad in BAD_VALUES.items():
            pairs: list[tuple[str, str | bytes]] = list(base)
            pairs[index] = (name, bad)
            answer = submit(client, form, pairs)
            assert answer.status_code < 500, (form.label, name, bad_kind, answer.status_code)
            after = stored_rows()
            assert not holds_big_text(after), (form.label, name, holds_big_text(after))
            if bad_kind != "big":
                assert_site_shaped_400(answer, form, bad_kind)
                assert after == before, (form.label, name, bad_kind)
            elif kinds[name] in ("checkbox", "submit") or name == "next":
                # A checkbox or button sends its fixed value, and any value means "this one";
                # the login's ``next`` is only where to go once logged in.
                before = after
            else:
                assert_refused_readably(client, answer, form, name)
                assert after == before, (form.label, name, bad_kind)
    for header in MEMBER_HEADERS if headers else ():
        answer = submit(client, form, list(base), **{header: "a\x00b"})
        assert answer.status_code == 400, (form.label, header, answer.status_code)
        assert b"NUL character" in answer.content, (form.label, header)
        assert stored_rows() == before, (form.label, header)


@pytest.fixture
def household(
    memory_on: ReferenceEngine, conversation: Conversation, user: Any
) -> tuple[Client, Conversation]:
    """The member, a superuser so that every form shows (vessels, managing memory), logged in
    with CSRF checks on, one conversation, and a memory of theirs to forget or share."""
    user.is_staff = user.is_superuser = True
    user.save()
    add_memory(memory_on, "Alice hides the biscuits.", scope="private", by=user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client, conversation


def test_every_form_refuses_bad_text_with_its_documented_error(
    household: tuple[Client, Conversation],
) -> None:
    client, conversation = household

    pages = walk_pages(client, "/")
    assert f"/conversations/{conversation.id}/" in pages
    reached: list[str] = []
    for forms in pages.values():
        for form in forms:
            if form.form_id not in SCRIPTED_FORMS and f"{form.method} {form.action}" not in reached:
                # Headers are read before any view: one form of each method shows it.
                headers = not any(action.startswith(form.method) for action in reached)
                reached.append(f"{form.method} {form.action}")
                walk_one_form(client, form, headers=headers)

    visitor = Client(enforce_csrf_checks=True)
    for form in walk_pages(visitor, "/accounts/login/", limit=1)["/accounts/login/"]:
        reached.append(f"{form.method} {form.action}")
        walk_one_form(visitor, form, headers=True)

    for expected in EXPECTED_ACTIONS:
        assert any(expected in action for action in reached), (expected, reached)
