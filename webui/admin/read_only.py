"""The admin of rows the system writes and nobody edits (ledger rows, messages, pin records).

Staff holding the model's view permission read them; nobody adds, changes or deletes one here,
superusers included, because each is a record of what happened. Like every admin of the house,
it refuses lookups on free text (:mod:`webui.admin.member_words`).
"""

from django.http import HttpRequest

from webui.admin.member_words import GuardsMemberWords


class ReadOnlyRecordAdmin(GuardsMemberWords):
    """Rows the system writes and nobody edits: staff holding the view permission read them."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
