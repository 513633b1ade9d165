"""The admin of what was said: conversations, their messages and the vault bases they read.

History is written by turns, never by staff. A conversation's messages, its pin, its vault base
and the tools it was offered are what the soul was told; changing any of them here would
silently rewrite that (the next turn's prompt would no longer start with the last one, and the
soul would answer a past it never had), so the admin shows them and changes none of them. A
member's words are theirs: other staff, a superuser included, see a message's metadata and not
its text. A conversation's title is the first words of its member's first message (or their
rename): staff see a conversation as soul, vessel and date, never search or edit its title. To
remove what was said, delete the whole conversation.
"""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from webui.admin.member_words import GuardsMemberWords
from webui.admin.read_only import ReadOnlyRecordAdmin
from webui.ledger.chart import cached_share_chart
from webui.ledger.report import turn_shares
from webui.models import Conversation, Message, VaultSnapshot
from webui.turns.lock import turn_is_live
from webui.web.conversations import ConversationError, delete_conversation

WITHHELD_MESSAGE = (
    "Said in member {viewer}'s conversation: it holds what they said and what their memory "
    "answered, so only they see its text (on their own pages and here)."
)
LIVE_TURN_REFUSAL = (
    "A reply is being written in this conversation now, so it was not deleted: wait for the "
    "reply (or let its member stop it), then delete."
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


def conversation_page_url(request: HttpRequest, conversation: Conversation) -> str | None:
    """Where ``request``'s account sees ``conversation`` on the site, or None where it cannot:
    a chat's page is its viewer's alone; an unattended run's is its post on the Soul Stream."""
    if conversation.viewer_id is None:
        run = getattr(conversation, "run", None)
        return run.get_absolute_url() if run is not None else None
    if conversation.viewer_id == request.user.pk and conversation.kind == Conversation.Kind.CHAT:
        return conversation.get_absolute_url()
    return None


class ConversationSiteLink:
    """ "View on site" on a conversation's change page only where the account has that page: the
    admin's default link would lead other staff to a 404 (a chat is its viewer's alone)."""

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Conversation | None = None,
    ) -> TemplateResponse:
        response = super().render_change_form(  # type: ignore[misc]
            request, context, add=add, change=change, form_url=form_url, obj=obj
        )
        url = conversation_page_url(request, obj) if obj is not None else None
        response.context_data.update(has_absolute_url=url is not None, absolute_url=url)
        return response


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


PIN_FIELDS = ["pinned_head", "pinned_at", "vault_sha256", "disclosure", "offered_tools"]
"""Decided at the first turn, by the turn: what memory block, vault base and tools the soul was
given. Never set by staff, not even on a new conversation."""

CHOSEN_AT_START = ["soul", "viewer", "kind", "temporary"]
"""Chosen when a conversation is started and fixed once it exists (a new viewer would read the
history and receive its pending answers)."""


@admin.register(Conversation)
class ConversationAdmin(ConversationSiteLink, GuardsMemberWords):
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
    search_fields = ["id"]
    date_hierarchy = "created_at"
    inlines = [MessageInline]
    # No title: it is the member's words, theirs to read and rename on their own pages.
    fields = ["vessel", *CHOSEN_AT_START, "id", "created_at", *PIN_FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        fixed = ["id", "created_at", *PIN_FIELDS]
        return [*fixed, *CHOSEN_AT_START, "cache_chart"] if obj is not None else fixed

    def get_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [*self.fields, "cache_chart"] if obj is not None else list(self.fields)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Refuse, with a message, to delete a conversation while a live turn writes in it: the
        turn would lose its reply. A turn whose process died (its lease lapsed) does not hold it."""
        conversation = self.get_object(request, unquote(object_id))
        if conversation is not None and turn_is_live(conversation.pk):
            self.message_user(request, LIVE_TURN_REFUSAL, level=messages.ERROR)
            return HttpResponseRedirect(
                reverse("admin:webui_conversation_change", args=[conversation.pk])
            )
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request: HttpRequest, obj: Conversation) -> None:
        """Delete the conversation under its turn lock (:func:`delete_conversation`: a turn that
        started meanwhile keeps it, and says so) and what this process cached of its history."""
        try:
            delete_conversation(conversation=obj)
        except ConversationError as refusal:
            self.message_user(request, str(refusal), level=messages.ERROR)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        """Delete the chosen conversations, each under its turn lock; those a live turn writes in
        are kept, and the message says how many."""
        kept = 0
        for conversation in queryset.select_related("vessel"):
            try:
                delete_conversation(conversation=conversation)
            except ConversationError:
                kept += 1
        if kept:
            self.message_user(
                request, f"{kept} of them kept: {LIVE_TURN_REFUSAL}", level=messages.ERROR
            )

    @admin.display(description="cached share per turn")
    def cache_chart(self, conversation: Conversation) -> SafeString:
        """The conversation's ledger as a small chart: counts only, no text."""
        return cached_share_chart(turn_shares(conversation))


@admin.register(Message)
class MessageAdmin(WithheldMessageText, ReadOnlyRecordAdmin):
    """Messages, read only, with no delete either: one message taken out of a conversation
    rewrites what the soul answered as surely as an edit. Deleting the conversation removes its
    whole history at once, which is how a member's words are removed."""

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
        "interrupted",
        "created_at",
    ]
    date_hierarchy = "created_at"

    def get_fields(self, request: HttpRequest, obj: Message | None = None) -> list[str]:
        return fields_for(request, obj.conversation if obj else None, self.fields)

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [*self.fields, *MESSAGE_TEXT_FIELDS.values()]


@admin.register(VaultSnapshot)
class VaultSnapshotAdmin(ReadOnlyRecordAdmin):
    """The vault bases conversations pinned at their first turn, as they read them: a record of
    what each soul was told it is, so nobody adds, edits or deletes one here."""

    list_display = ["soul", "short_sha256", "created_at"]
    list_filter = ["soul", "created_at"]
    search_fields = ["sha256"]
    date_hierarchy = "created_at"
    fields = ["soul", "sha256", "created_at", "conversations", "text"]
    readonly_fields = fields
    list_select_related = ["soul"]

    @admin.display(description="sha256")
    def short_sha256(self, snapshot: VaultSnapshot) -> str:
        return snapshot.sha256[:12]

    @admin.display(description="conversations that read it")
    def conversations(self, snapshot: VaultSnapshot) -> int:
        return Conversation.objects.filter(
            soul_id=snapshot.soul_id, vault_sha256=snapshot.sha256
        ).count()
