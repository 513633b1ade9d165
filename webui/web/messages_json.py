"""A conversation's messages as JSON, in the one shape the chat page embeds and the JSON API
answers (:mod:`webui.api` imports them from here), each with its notes."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from webui.extensions import message_notes
from webui.models import Conversation, Message
from webui.text.reply_markdown import render_reply_html


class MessageNoteSerializer(serializers.Serializer):
    """A note shown under a message (:class:`webui.extensions.MessageNote`): never part of it."""

    kind = serializers.CharField()
    text = serializers.CharField()


class MessageSerializer(serializers.ModelSerializer):
    """A stored message, as the chat page shows it: a reply also as sanitised HTML (``html``,
    :mod:`webui.text.reply_markdown`; a member's own message has ``html`` null and shows as written),
    with the notes the installed extensions put under it (give them as
    ``context={"notes": message_notes(...)}``; none without)."""

    vessel = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    html = serializers.SerializerMethodField()
    notes = serializers.SerializerMethodField()
    # The API's key stays ``answers`` (clients read it); the field it shows is ``reply_to``.
    answers = serializers.PrimaryKeyRelatedField(
        source="reply_to",
        read_only=True,
        allow_null=True,
        help_text="The user message this assistant row answers; a message has at most one reply.",
    )

    class Meta:
        model = Message
        fields = [
            "id",
            "role",
            "content",
            "html",
            "tool_uses",
            "usage",
            "vessel",
            "answers",
            "stopped",
            "interrupted",
            "created_at",
            "notes",
        ]
        read_only_fields = fields

    @extend_schema_field(
        {"type": "string", "nullable": True, "description": "A reply's Markdown as sanitised HTML."}
    )
    def get_html(self, message: Message) -> str | None:
        if message.role != Message.Role.ASSISTANT:
            return None
        return render_reply_html(message.content)

    @extend_schema_field(MessageNoteSerializer(many=True))
    def get_notes(self, message: Message) -> list[dict[str, str]]:
        return self.context.get("notes", {}).get(str(message.pk), [])


def serialized_messages(conversation: Conversation, messages: list[Message]) -> list[Any]:
    """``messages`` of ``conversation`` as the API gives them, each with its notes. For the
    conversation's own member only: callers reach it through ``conversations_for``."""
    notes = message_notes(conversation, messages)
    return MessageSerializer(messages, many=True, context={"notes": notes}).data
