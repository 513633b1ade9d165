"""Admin for the host's models. Staff only, as the Django admin always is, and within it Django's
model permissions decide what each account may see, change and run."""

from typing import Any

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from webui.admin.member_words import GuardsMemberWords
from webui.admin.read_only import ReadOnlyRecordAdmin
from webui.models import (
    DailyChore,
    ScheduledJob,
    Soul,
    UnattendedRun,
    Vessel,
    VesselCall,
    VesselMove,
)
from webui.prompt.vault import vault_problem
from webui.unattended.display import describe_memory
from webui.vessels.connection import check_connection, key_status


@admin.register(Soul)
class SoulAdmin(GuardsMemberWords):
    list_display = ["name", "slug", "vault_path", "vault_status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    @admin.display(description="vault")
    def vault_status(self, soul: Soul) -> str:
        return vault_problem(soul.vault_path) or "readable"


@admin.register(Vessel)
class VesselAdmin(GuardsMemberWords):
    list_display = [
        "name",
        "slug",
        "adapter",
        "model",
        "base_url",
        "key",
        "memory_tool_enabled",
        "brain_priority",
        "enabled",
        "household_default",
        "last_outcome",
    ]
    list_editable = ["memory_tool_enabled", "enabled"]
    readonly_fields = ["last_outcome", "last_outcome_at", "last_problem"]
    list_filter = ["adapter", "enabled", "memory_tool_enabled"]
    search_fields = ["name", "slug", "model"]
    prepopulated_fields = {"slug": ["name"]}
    actions = ["run_connection_test"]

    @admin.display(description="key")
    def key(self, vessel: Vessel) -> str:
        return key_status(vessel)

    def save_model(self, request: HttpRequest, obj: Vessel, form: Any, change: bool) -> None:
        """Ticking *Household default* takes it from the vessel that had it, in the same
        transaction (the constraint keeps at most one)."""
        with transaction.atomic():
            if obj.household_default:
                Vessel.objects.filter(household_default=True).exclude(pk=obj.pk).update(
                    household_default=False
                )
            super().save_model(request, obj, form, change)

    # A real, paid provider call: for those who may change vessels, not for a view-only account.
    @admin.action(description="Test connection (one small real call)", permissions=["change"])
    def run_connection_test(self, request: HttpRequest, queryset: QuerySet[Vessel]) -> None:
        for vessel in queryset:
            outcome = check_connection(vessel)
            level = messages.SUCCESS if outcome.ok else messages.ERROR
            self.message_user(request, outcome.summary, level)


@admin.register(ScheduledJob)
class ScheduledJobAdmin(GuardsMemberWords):
    list_display = ["name", "kind", "soul", "vessel", "schedule", "enabled", "next_run_at"]
    list_filter = ["kind", "enabled", "soul"]
    list_editable = ["enabled"]
    search_fields = ["name", "prompt"]


@admin.register(UnattendedRun)
class UnattendedRunAdmin(GuardsMemberWords):
    list_display = ["started_at", "kind", "job", "soul", "outcome", "memory_summary", "finished_at"]
    list_filter = ["kind", "outcome", "soul", "started_at"]
    date_hierarchy = "started_at"
    readonly_fields = [f.name for f in UnattendedRun._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description="memory")
    def memory_summary(self, run: UnattendedRun) -> str:
        return describe_memory(run.memory)


# django-axes' own admin offers "cleanup expired attempts", which fails outside a login request
# (it reads the login's attempt time from the request). Expired attempts are already removed at
# every login, so the action is left out rather than offered broken.
if admin.site.is_registered(AccessAttempt):
    admin.site.unregister(AccessAttempt)


@admin.register(AccessAttempt)
class LoginAttemptAdmin(GuardsMemberWords, AccessAttemptAdmin):
    actions: list[str] = []


@admin.register(DailyChore)
class DailyChoreAdmin(GuardsMemberWords):
    """When the scheduler's daily upkeep (``prune``) last ran and what it did; read only."""

    list_display = ["name", "last_day", "last_started_at", "last_finished_at", "last_result"]
    readonly_fields = [f.name for f in DailyChore._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(VesselCall)
class VesselCallAdmin(ReadOnlyRecordAdmin):
    """The cache ledger, read only: a row per vessel call, written by turns. Counts, hashes and
    drift causes only; a row holds no prompt text."""

    list_display = [
        "created_at",
        "conversation",
        "vessel",
        "round",
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "prefix_bytes",
        "drift_section",
        "drift_cause",
    ]
    list_filter = ["adapter", "drift_section", "vessel", "created_at"]
    search_fields = ["conversation__id"]
    date_hierarchy = "created_at"
    list_select_related = ["conversation__soul", "conversation__vessel", "vessel"]
    readonly_fields = [f.name for f in VesselCall._meta.fields]


@admin.register(VesselMove)
class VesselMoveAdmin(ReadOnlyRecordAdmin):
    """A member's moves of their chat to another vessel (the cause ``moved_by_member`` in the
    ledger), read only. The conversation is named by soul, vessel and date, never its title."""

    list_display = ["moved_at", "conversation", "from_vessel", "to_vessel", "moved_by"]
    list_filter = ["to_vessel", "moved_at"]
    list_select_related = ["conversation__soul", "conversation__vessel", "from_vessel", "to_vessel"]
    readonly_fields = [f.name for f in VesselMove._meta.fields]
