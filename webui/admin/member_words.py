"""No query-string lookup reads a member's words, whoever asks (a superuser included).

The admin's change lists accept lookups on a model's own fields from the query string
(``?content__regex=^a``). A list that answers "some rows" or "none" to a guessed prefix reads the
text one character at a time, though the change page withholds it. So every admin of the house
refuses (a 400, through Django's ``DisallowedModelAdminLookup``) any lookup that reaches free text:

- every ``TextField`` and ``JSONField`` (messages, tool uses and rounds, disclosures, memory
  blocks, outbox payloads, brain-door answers and attempts, unattended memory, vault snapshots,
  and every error or result text): the admin filters by choices, relations and dates, never by
  free text, so refusing them all costs no page anything;
- the ``CharField``\\ s that hold a member's words (:data:`MEMBER_WORDS_CHAR_FIELDS`: a
  conversation's title, the first words of its first message);
- an account's password hash (:data:`SECRET_CHAR_FIELDS`), which the same guessing would read;
- any value holding a NUL, and any ``regex`` or ``iregex`` lookup (no page offers one), which
  PostgreSQL would answer with an error page instead of a plain 400.

Searches (``?q=``) are the admins' own ``search_fields``; none may reach such a field
(``tests/webui/admin/test_admin_member_words.py`` checks every registered admin).
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

#: ``CharField``\ s that hold a member's words, as ``app_label.model_name.field_name``.
MEMBER_WORDS_CHAR_FIELDS = frozenset({"webui.conversation.title"})
#: ``CharField``\ s that hold a secret's hash, refused as words are.
SECRET_CHAR_FIELDS = frozenset({"auth.user.password"})
#: Lookups no admin page offers, refused on every field (a bad pattern is a database error).
REFUSED_LOOKUPS = frozenset({"regex", "iregex"})


def holds_member_words(field: Any) -> bool:
    """Whether ``field`` is free text that may hold a member's words (see the module's list)."""
    if isinstance(field, models.TextField | models.JSONField):
        return True
    concrete = getattr(field, "model", None)
    if concrete is None or not isinstance(field, models.CharField):
        return False
    meta = concrete._meta.concrete_model._meta
    return f"{meta.label_lower}.{field.name}" in MEMBER_WORDS_CHAR_FIELDS


def holds_secret(field: Any) -> bool:
    """Whether ``field`` holds a secret's hash (see :data:`SECRET_CHAR_FIELDS`)."""
    concrete = getattr(field, "model", None)
    if concrete is None or not isinstance(field, models.CharField):
        return False
    return f"{concrete._meta.concrete_model._meta.label_lower}.{field.name}" in SECRET_CHAR_FIELDS


def reaches_member_words(model: type[models.Model], lookup: str) -> bool:
    """Whether ``lookup`` (``conversation__title__startswith``) on ``model`` reads free text or
    asks for a regular expression: each field on its path is looked at, relations followed."""
    parts = lookup.split(LOOKUP_SEP)
    if REFUSED_LOOKUPS.intersection(parts):
        return True
    for part in parts:
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        if holds_member_words(field) or holds_secret(field):
            return True
        if not getattr(field, "path_infos", None):
            return False
        model = field.path_infos[-1].to_opts.model
    return False


class GuardsMemberWords(admin.ModelAdmin):
    """A ModelAdmin that refuses every query-string lookup reaching free text (see the module),
    and a search term holding a NUL (the autocomplete's would reach PostgreSQL)."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if "\x00" in str(value) or reaches_member_words(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        if "\x00" in search_term:
            raise DisallowedModelAdminLookup("A search term cannot hold a NUL character.")
        return super().get_search_results(request, queryset, search_term)
