"""Admin for the host's models. Staff only, as the Django admin always is, and within it Django's
model permissions decide what each account may see, change and run."""

from typing import Any

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from webui.cache_chart import cached_share_chart
from webui.cache_report import turn_shares
from webui.models import (
    Conversation,
    DailyChore,
    Message,
    ScheduledJob,
    Soul,
    UnattendedRun,
    Vessel,
    VesselCall,
)
from webui.unattended_display import describe_memory
from webui.vault import vault_problem
from webui.vessels.connection import check_connection, key_status


@admin.register(Soul)
class SoulAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "vault_path", "vault_status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    @admin.display(description="vault")
    def vault_status(self, soul: Soul) -> str:
        return vault_problem(soul.vault_path) or "readable"


@admin.register(Vessel)
class VesselAdmin(admin.ModelAdmin):
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
    ]
    list_editable = ["memory_tool_enabled", "enabled"]
    list_filter = ["adapter", "enabled", "memory_tool_enabled"]
    search_fields = ["name", "slug", "model"]
    prepopulated_fields = {"slug": ["name"]}
    actions = ["run_connection_test"]

    @admin.display(description="key")
    def key(self, vessel: Vessel) -> str:
        return key_status(vessel)

    # A real, paid provider call: for those who may change vessels, not for a view-only account.
    @admin.action(description="Test connection (one small real call)", permissions=["change"])
    def run_connection_test(self, request: HttpRequest, queryset: QuerySet[Vessel]) -> None:
        for vessel in queryset:
            outcome = check_connection(vessel)
            level = messages.SUCCESS if outcome.ok else messages.ERROR
            self.message_user(request, outcome.summary, level)


WITHHELD_MESSAGE = (
    "Said in member {viewer}'s conversation: it holds what they said and what their memory "
    "answered, so only they see its text (on their own pages and here)."
)
MESSAGE_TEXT_FIELDS = {
    "content": "content_withheld",
    "tool_uses": "tool_names",
    "rounds": "rounds_withheld",
}


def shows_conversation_text(request: HttpRequest, conversation: Conversation) -> bool:
    """Whether ``request``'s account may read the messages of ``conversation``: a member's
    conversation holds what they said and what their private memory answered, which reach nobody
    else, staff included; an unattended run's (no viewer) holds household memory only."""
    return conversation.viewer_id is None or conversation.viewer_id == request.user.pk


def fields_for(
    request: HttpRequest, conversation: Conversation | None, fields: list[str]
) -> list[str]:
    """``fields`` as ``request``'s account may see them: text fields swapped for their withheld
    stand-ins unless the account is the conversation's own viewer."""
    if conversation is None or shows_conversation_text(request, conversation):
        return list(fields)
    return [MESSAGE_TEXT_FIELDS.get(name, name) for name in fields]


def tool_label(use: Any) -> str:
    """A tool use as staff may see it without its text: its name and verb (``memory (recall)``)."""
    use = use if isinstance(use, dict) else {}
    tool_input = use.get("input")
    verb = tool_input.get("verb") if isinstance(tool_input, dict) else None
    name = str(use.get("name", "?"))
    return f"{name} ({verb})" if isinstance(verb, str) else name


class WithheldMessageText:
    """The stand-ins a message's text fields show to staff who are not its conversation's viewer:
    the tool names and verbs stay, their inputs and outputs do not."""

    @admin.display(description="content")
    def content_withheld(self, message: Message) -> str:
        return WITHHELD_MESSAGE.format(viewer=message.conversation.viewer_id)

    @admin.display(description="tool uses")
    def tool_names(self, message: Message) -> str:
        return ", ".join(tool_label(use) for use in message.tool_uses) or "none"

    @admin.display(description="rounds")
    def rounds_withheld(self, message: Message) -> str:
        return f"{len(message.rounds)} round(s); their text is withheld like the content."


class MessageInline(WithheldMessageText, admin.TabularInline):
    """A conversation's messages, read only: history is written by turns, not by staff."""

    model = Message
    fields = ["sequence", "role", "content", "tool_uses", "rounds", "usage", "vessel", "created_at"]
    extra = 0
    can_delete = False
    ordering = ["sequence"]

    def get_fields(self, request: HttpRequest, obj: Conversation | None = None) -> list[str]:
        return fields_for(request, obj, self.fields)

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [*self.fields, *MESSAGE_TEXT_FIELDS.values()]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


HISTORY_FIELDS = [
    "soul",
    "viewer",
    "kind",
    "temporary",
    "pinned_head",
    "pinned_at",
    "vault_sha256",
    "offered_tools",
]
"""What decides a conversation's history and what the soul was told: fixed once it exists (a new
viewer would read the history and receive its pending answers)."""


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "soul",
        "vessel",
        "viewer",
        "kind",
        "temporary",
        "pinned_head",
        "created_at",
    ]
    list_filter = ["kind", "temporary", "soul", "vessel", "created_at"]
    search_fields = ["title", "id"]
    date_hierarchy = "created_at"
    inlines = [MessageInline]

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        fixed = ["id", "created_at", "offered_tools"]
        return [*fixed, *HISTORY_FIELDS, "cache_chart"] if obj is not None else fixed

    @admin.display(description="cached share per turn")
    def cache_chart(self, conversation: Conversation) -> SafeString:
        """The conversation's ledger as a small chart: counts only, no text."""
        return cached_share_chart(turn_shares(conversation))


@admin.register(Message)
class MessageAdmin(WithheldMessageText, admin.ModelAdmin):
    list_display = ["__str__", "conversation", "role", "vessel", "created_at"]
    list_filter = ["role", "vessel", "created_at"]
    search_fields = ["conversation__id"]
    fields = [
        "id",
        "conversation",
        "sequence",
        "role",
        "content",
        "tool_uses",
        "rounds",
        "usage",
        "vessel",
        "stopped",
        "created_at",
    ]
    raw_id_fields = ["conversation"]
    date_hierarchy = "created_at"

    def get_fields(self, request: HttpRequest, obj: Message | None = None) -> list[str]:
        return fields_for(request, obj.conversation if obj else None, self.fields)

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        fixed = ["id", "created_at", "sequence", *MESSAGE_TEXT_FIELDS.values()]
        return [*fixed, "conversation", "role"] if obj is not None else fixed


@admin.register(ScheduledJob)
class ScheduledJobAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "soul", "vessel", "schedule", "enabled", "next_run_at"]
    list_filter = ["kind", "enabled", "soul"]
    list_editable = ["enabled"]
    search_fields = ["name", "prompt"]


@admin.register(UnattendedRun)
class UnattendedRunAdmin(admin.ModelAdmin):
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
class LoginAttemptAdmin(AccessAttemptAdmin):
    actions: list[str] = []


@admin.register(DailyChore)
class DailyChoreAdmin(admin.ModelAdmin):
    """When the scheduler's daily upkeep (``prune``) last ran and what it did; read only."""

    list_display = ["name", "last_day", "last_started_at", "last_finished_at", "last_result"]
    readonly_fields = [f.name for f in DailyChore._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(VesselCall)
class VesselCallAdmin(admin.ModelAdmin):
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
