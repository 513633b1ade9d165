"""The admins of installed apps' models, registered again so they refuse lookups on free text as
every admin of the house does (:mod:`webui.admin.member_words`). Each keeps its app's own admin
otherwise. (django-axes' failed-login attempts are registered again in :mod:`.vessels`.)"""

from django.contrib import admin
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult

from webui.admin.member_words import GuardsMemberWords

if admin.site.is_registered(DBTaskResult):
    admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class TaskResultAdmin(GuardsMemberWords, DBTaskResultAdmin):
    """django-tasks' results, read only as that app keeps them; no lookup on their arguments,
    return values or tracebacks."""
