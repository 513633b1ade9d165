"""Walking the admin for a member's words, as staff holding every view permission and as a
superuser: every registered admin's list, change, history and delete pages, searches for the
words, and every free-text field looked up from the query string.

The host's walk (``tests/webui/admin/test_admin_member_words.py``) and the plug-in's
(``tests/pippa_memory/test_admin_member_words.py``) share this; it never imports the plug-in, so the
host's walk also runs with the plug-in removed. The fields it looks up are found here from the
models themselves (every ``TextField`` and ``JSONField``, and the ``CharField``\\ s that hold a
member's words), not from the guard's own list.
"""

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db import models
from django.test import Client

#: ``CharField``\ s holding a member's words, by concrete model label: a conversation's title is
#: the first words of its member's first message, or their rename.
WORDS_CHAR_FIELDS = {("webui.conversation", "title")}
LOOKUPS = ("contains", "icontains", "regex", "startswith", "exact")
#: What PostgreSQL answers with an error, not a result: a NUL, and a pattern that does not compile.
HOSTILE_VALUES = {"exact": "\x00", "regex": "("}


def text_fields(model: type[models.Model]) -> list[str]:
    """The names of ``model``'s fields that hold free text (see the module)."""
    label = model._meta.concrete_model._meta.label_lower
    return [
        field.name
        for field in model._meta.concrete_fields
        if isinstance(field, models.TextField | models.JSONField)
        or (isinstance(field, models.CharField) and (label, field.name) in WORDS_CHAR_FIELDS)
    ]


def changelist(model: type[models.Model]) -> str:
    return f"/admin/{model._meta.app_label}/{model._meta.model_name}/"


def lookup_queries(model: type[models.Model], guess: str) -> Iterator[str]:
    """Every lookup of the walk on ``model``'s list: each free-text field with each lookup
    (``guess`` as the value, and the hostile values), and through each foreign key the free
    text of the model it points at."""
    paths = list(text_fields(model))
    for field in model._meta.concrete_fields:
        if isinstance(field, models.ForeignKey):
            paths += [f"{field.name}__{name}" for name in text_fields(field.related_model)]
    for path in paths:
        for lookup in LOOKUPS:
            yield urlencode({f"{path}__{lookup}": guess})
        for lookup, value in HOSTILE_VALUES.items():
            yield urlencode({f"{path}__{lookup}": value})
        yield urlencode({path: guess})


def refused_lookups_that_answered(client: Client, guess: str, words: Iterable[str]) -> list[str]:
    """Each lookup on any registered admin's list that did not answer a plain 400, or whose page
    quoted one of ``words``."""
    wrong = []
    for model in admin.site._registry:
        for query in lookup_queries(model, guess):
            page = client.get(f"{changelist(model)}?{query}")
            text = page.content.decode(errors="replace").lower()
            if page.status_code != 400:
                wrong.append(f"{changelist(model)}?{query}: {page.status_code}, not 400")
            wrong += [f"{changelist(model)}?{query} quotes {w!r}" for w in words if w in text]
    return wrong


def admin_pages(*, with_delete: bool) -> Iterator[str]:
    """The admin's index, and every registered admin's list, and each row's change and history
    page (and its delete confirmation, which lists what goes with it)."""
    yield "/admin/"
    for model in admin.site._registry:
        base = changelist(model)
        yield base
        for pk in model._default_manager.values_list("pk", flat=True):
            yield f"{base}{pk}/change/"
            yield f"{base}{pk}/history/"
            if with_delete:
                yield f"{base}{pk}/delete/"


def pages_quoting(client: Client, paths: Iterable[str], words: Iterable[str]) -> list[str]:
    """Each of ``paths`` that does not answer 200 (a delete page may be 403), or quotes one of
    ``words`` (compared ignoring case)."""
    wrong = []
    for path in paths:
        page = client.get(path)
        if page.status_code not in (200, 403):
            wrong.append(f"{path}: {page.status_code}")
        text = page.content.decode(errors="replace").lower()
        wrong += [f"{path} quotes {w!r}" for w in words if w in text]
    return wrong


def searches_finding(client: Client, words: Iterable[str]) -> list[str]:
    """Each registered admin's search (``?q=``) that finds a row by one of ``words``."""
    wrong = []
    for model, model_admin in admin.site._registry.items():
        if not model_admin.search_fields:
            continue  # no search box: the list ignores ``q``
        for term in words:
            page = client.get(changelist(model), {"q": term})
            found: Any = page.context["cl"].result_count if page.context else None
            if page.status_code != 200 or found:
                wrong.append(f"{changelist(model)}?q={term}: {page.status_code}, {found} found")
    return wrong
