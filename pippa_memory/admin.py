"""Staff views of memory: pin history, stored blocks, and each conversation's pin with a re-pin.

Django's model permissions decide, as in the host's admin: ``view_*`` to read each list, and the
plug-in's own permissions to act: ``pippa_memory.repin_conversation`` to re-pin a conversation,
``pippa_memory.retry_outboxevent`` to retry or revive outbox events.
"""

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html

from pippa_memory.engine.members import member_id
from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import (
    BrainCall,
    ConversationPin,
    MemoryBlock,
    OutboxEvent,
    PinRecord,
)
from pippa_memory.outbox.events import make_due
from pippa_memory.pins.blocks import stored_block
from pippa_memory.pins.records import request_repin
from webui.admin.conversations import ConversationSiteLink
from webui.admin.read_only import ReadOnlyRecordAdmin
from webui.models import Conversation


@admin.register(PinRecord)
class PinRecordAdmin(ReadOnlyRecordAdmin):
    list_display = [
        "created_at",
        "conversation",
        "soul",
        "outcome",
        "revision",
        "short_sha256",
        "cause",
        "reason",
        "engine_latency_ms",
        "requested_by",
    ]
    list_filter = ["soul", "outcome", "cause", "created_at"]
    date_hierarchy = "created_at"
    search_fields = ["conversation__id", "revision", "reason"]
    list_select_related = ["conversation__soul", "conversation__vessel", "soul", "requested_by"]

    @admin.display(description="sha256")
    def short_sha256(self, record: PinRecord) -> str:
        return record.sha256[:12]


WITHHELD = (
    "Rendered for member {viewer}: it holds their private memories, so only they see its text "
    "(on their own pages and in their own conversations)."
)


#: The permission that shows the item ids of blocks rendered for other members.
VIEW_MEMBER_ITEM_IDS = "pippa_memory.view_member_item_ids"
ITEMS_WITHHELD = (
    "{count} item id(s), withheld: rendered for member {viewer}, it may name their private "
    "memories (pippa_memory.view_member_item_ids shows them)."
)


def shows_item_ids(request: HttpRequest, viewer: str) -> bool:
    """Whether ``request``'s account may see the item ids of a block rendered for ``viewer``: its
    own or a household-only block, or with :data:`VIEW_MEMBER_ITEM_IDS`."""
    return shows_block_text(request, viewer) or request.user.has_perm(VIEW_MEMBER_ITEM_IDS)


def shows_block_text(request: HttpRequest, viewer: str) -> bool:
    """Whether ``request``'s account may read a block rendered for ``viewer`` (a member id; blank
    for a household-only block): a block for a member holds their private memories, which reach
    nobody else, staff included."""
    return not viewer or viewer == member_id(request.user)


class BlockTextWithheld:
    """An admin whose ``block_field`` holds a block's text: staff other than the member it was
    rendered for see ``withheld_field`` in its place (:func:`shows_block_text`)."""

    fields: list[str]
    block_field: str
    withheld_field: str

    def block_viewer(self, obj: Any) -> str:
        """The member id the object's block was rendered for; blank for a household-only block."""
        raise NotImplementedError

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None and not shows_block_text(request, self.block_viewer(obj)):
            withheld = self.withheld_field
            return [withheld if name == self.block_field else name for name in self.fields]
        return list(self.fields)

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [*super().get_readonly_fields(request, obj), self.withheld_field]  # type: ignore[misc]


@admin.register(MemoryBlock)
class MemoryBlockAdmin(BlockTextWithheld, ReadOnlyRecordAdmin):
    """Stored blocks. A block rendered for another member keeps its text from staff, and its item
    ids too (which of that member's private memories exist) unless they hold
    :data:`VIEW_MEMBER_ITEM_IDS`; its hash is keyed, so it cannot be tested against a guess."""

    list_display = ["soul", "revision", "viewer", "sha256", "fetched_at"]
    list_filter = ["soul", "fetched_at"]
    fields = ["soul", "revision", "viewer", "sha256", "fetched_at", "items", "text"]
    block_field, withheld_field = "text", "text_withheld"

    def block_viewer(self, obj: MemoryBlock) -> str:
        return obj.viewer

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = super().get_fields(request, obj)
        if obj is not None and not shows_item_ids(request, obj.viewer):
            return ["items_withheld" if name == "items" else name for name in fields]
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [*super().get_readonly_fields(request, obj), "items_withheld"]

    @admin.display(description="items")
    def items_withheld(self, block: MemoryBlock) -> str:
        return ITEMS_WITHHELD.format(viewer=block.viewer, count=len(block.items or []))

    @admin.display(description="text")
    def text_withheld(self, block: MemoryBlock) -> str:
        return WITHHELD.format(viewer=block.viewer)


class RepinForm(forms.Form):
    reason = forms.CharField(
        max_length=300,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Recorded in the pin history with your name.",
    )


@admin.register(ConversationPin)
class ConversationPinAdmin(ConversationSiteLink, BlockTextWithheld, ReadOnlyRecordAdmin):
    list_display = ["__str__", "soul", "viewer", "kind", "pinned_head", "pinned_at"]
    list_filter = ["soul", "kind", "pinned_at"]
    search_fields = ["id"]
    fields = ["id", "soul", "viewer", "kind", "temporary", "pinned_head", "pinned_at", "block"]
    readonly_fields = fields
    block_field, withheld_field = "block", "block_withheld"
    actions = ["repin_at_next_turn"]

    def has_repin_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("pippa_memory.repin_conversation")

    def block_viewer(self, obj: ConversationPin) -> str:
        return str(obj.viewer_id) if obj.viewer_id is not None else ""

    @admin.display(description="pinned block")
    def block_withheld(self, conversation: ConversationPin) -> str:
        if conversation.pinned_head is None:
            return self.block(conversation)
        return WITHHELD.format(viewer=conversation.viewer_id)

    @admin.display(description="pinned block")
    def block(self, conversation: ConversationPin) -> str:
        if conversation.pinned_at is None:
            return "Not pinned yet: the block is decided at the next turn."
        if conversation.pinned_head is None:
            record = conversation.pin_records.filter(outcome=PinRecord.Outcome.ABSENT).first()
            why = f"{record.get_cause_display()} ({record.reason})" if record else "unknown"
            return f"Pinned absent (no memory block for this conversation): {why}."
        found = stored_block(conversation)
        return found.text if found else "The block for this revision is not stored here."

    @admin.action(
        description="Re-pin at next turn (costs one prompt-cache miss)", permissions=["repin"]
    )
    def repin_at_next_turn(
        self, request: HttpRequest, queryset: QuerySet[ConversationPin]
    ) -> HttpResponse | None:
        form = RepinForm(request.POST if "confirm" in request.POST else None)
        if "confirm" in request.POST and form.is_valid():
            for conversation in queryset:
                request_repin(
                    conversation=conversation,
                    requested_by=request.user,
                    reason=form.cleaned_data["reason"],
                )
            self.message_user(
                request,
                f"{queryset.count()} conversation(s) will pin afresh at their next turn.",
                messages.SUCCESS,
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Re-pin at next turn",
            "conversations": queryset,
            "form": form,
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "pippa_memory/repin_confirm.html", context)


OUTBOX_WITHHELD = (
    "Sent from member {viewer}'s conversation: it carries what they said and what their memory "
    "answered, so only they see it. {size} bytes, keyed sha256 {sha256}."
)
UNKNOWN_VIEWER = "(unknown)"


def event_viewer(event: OutboxEvent) -> str:
    """The member id of the conversation ``event`` was sent from, blank for an unattended run's;
    read from the conversation's row, else (the row gone) from what the event told the engine;
    ``UNKNOWN_VIEWER`` (nobody's id, so the payload stays withheld) when neither says."""
    row = Conversation.objects.filter(pk=event.conversation_id).values("viewer_id").first()
    if row is not None:
        return "" if row["viewer_id"] is None else str(row["viewer_id"])
    told = event.payload.get("conversation") if isinstance(event.payload, dict) else None
    if not isinstance(told, dict) or "viewer" not in told:
        return UNKNOWN_VIEWER
    viewer = told["viewer"]
    return str(viewer.get("member", UNKNOWN_VIEWER)) if isinstance(viewer, dict) else ""


def json_size(value: Any) -> dict[str, Any]:
    """How big ``value`` is as JSON, and its keyed hash (no guess can be checked against it):
    what staff may know of a withheld body."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return {"size": len(text.encode()), "sha256": keyed_sha256(text)}


@admin.register(OutboxEvent)
class OutboxEventAdmin(ReadOnlyRecordAdmin):
    list_display = [
        "created_at",
        "id",
        "soul",
        "status",
        "attempts",
        "next_attempt_at",
        "last_status",
        "short_error",
    ]
    list_filter = ["status", "soul", "created_at"]
    date_hierarchy = "created_at"
    search_fields = ["id", "conversation_id", "message_id"]
    fields = [
        "id",
        "event_type",
        "soul",
        "conversation_id",
        "message_id",
        "status",
        "attempts",
        "next_attempt_at",
        "last_status",
        "last_error",
        "created_at",
        "delivered_at",
        "pretty_payload",
    ]
    readonly_fields = [*fields, "payload_withheld"]
    actions = ["retry_now", "revive_dead"]

    def get_fields(self, request: HttpRequest, obj: OutboxEvent | None = None) -> list[str]:
        if obj is not None and not shows_block_text(request, event_viewer(obj)):
            return [
                name if name != "pretty_payload" else "payload_withheld" for name in self.fields
            ]
        return list(self.fields)

    def has_retry_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("pippa_memory.retry_outboxevent")

    @admin.display(description="last error")
    def short_error(self, event: OutboxEvent) -> str:
        return event.last_error[:80]

    @admin.display(description="payload")
    def pretty_payload(self, event: OutboxEvent) -> str:
        return format_html("<pre>{}</pre>", json.dumps(event.payload, indent=2, ensure_ascii=False))

    @admin.display(description="payload")
    def payload_withheld(self, event: OutboxEvent) -> str:
        return OUTBOX_WITHHELD.format(viewer=event_viewer(event), **json_size(event.payload))

    @admin.action(description="Retry now (pending events)", permissions=["retry"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet[OutboxEvent]) -> None:
        count = make_due(queryset, revive_dead=False)
        self.message_user(request, f"{count} pending event(s) will be delivered now.")

    @admin.action(description="Dead → pending (deliver again)", permissions=["retry"])
    def revive_dead(self, request: HttpRequest, queryset: QuerySet[OutboxEvent]) -> None:
        count = make_due(queryset.filter(status=OutboxEvent.Status.DEAD), revive_dead=True)
        self.message_user(request, f"{count} dead event(s) are pending again.")


@admin.register(BrainCall)
class BrainCallAdmin(ReadOnlyRecordAdmin):
    list_display = [
        "created_at",
        "role",
        "soul",
        "vessel",
        "outcome",
        "status_code",
        "repaired",
        "latency_ms",
        "request_id",
    ]
    list_filter = ["role", "outcome", "soul", "vessel", "created_at"]
    date_hierarchy = "created_at"
    search_fields = ["request_id", "webhook_id"]
    # The response and the attempts' messages are not shown to anyone: the engine may have asked the
    # vessel to assemble a block from a member's private items, and the row keeps no viewer.
    fields = [
        "request_id",
        "webhook_id",
        "body_sha256",
        "role",
        "soul",
        "vessel",
        "model",
        "outcome",
        "status_code",
        "repaired",
        "latency_ms",
        "created_at",
        "response_withheld",
        "attempt_outcomes",
    ]
    readonly_fields = fields

    @admin.display(description="response")
    def response_withheld(self, call: BrainCall) -> str:
        if call.response_body is None:
            return "No response stored."
        text = call.response_body
        return RESPONSE_WITHHELD.format(size=len(text.encode()), sha256=keyed_sha256(text))

    @admin.display(description="attempts")
    def attempt_outcomes(self, call: BrainCall) -> str:
        return "; ".join(attempt_label(attempt) for attempt in call.attempts) or "none"


RESPONSE_WITHHELD = (
    "Withheld: it may hold a member's private memories. {size} bytes, keyed sha256 {sha256}."
)


def attempt_label(attempt: Any) -> str:
    """One vessel attempt without its words: vessel, model, outcome and error code."""
    attempt = attempt if isinstance(attempt, dict) else {}
    where = f"{attempt.get('vessel', '?')} / {attempt.get('model', '?')}"
    code = f" ({attempt['code']})" if attempt.get("code") else ""
    return f"{where}: {attempt.get('outcome', '?')}{code}"
