"""The admins of installed apps' models, registered again so they refuse lookups on free text,
on password hashes and on NULs as every admin of the house does (:mod:`webui.admin.member_words`).
Each keeps its app's own admin otherwise. (django-axes' failed-login attempts are registered
again in :mod:`.vessels`.)"""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from webui.admin.member_words import GuardsMemberWords

User = get_user_model()
for model in (User, Group):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


@admin.register(User)
class HouseholdUserAdmin(GuardsMemberWords, UserAdmin):
    """Accounts, as Django's own admin keeps them; no lookup on a password hash."""


@admin.register(Group)
class HouseholdGroupAdmin(GuardsMemberWords, GroupAdmin):
    """Groups, as Django's own admin keeps them."""
