"""Serializers of the JSON API's requests and conversations (messages are :mod:`webui.web.messages_json`)."""

import re

from rest_framework import serializers

from webui.conf import webui_settings
from webui.models import Conversation, Soul, Vessel
from webui.web.conversations import title_problem

SLUG = re.compile(r"^[-a-zA-Z0-9_]+\Z")


class SlugField(serializers.SlugRelatedField):
    """A related object named by slug; a value that cannot be a slug is refused before any query."""

    def to_internal_value(self, data: object) -> object:
        if not isinstance(data, str) or not SLUG.match(data):
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class ConversationSerializer(serializers.ModelSerializer):
    """A conversation; on create, the soul and vessel are named by slug."""

    soul = SlugField(
        slug_field="slug",
        queryset=Soul.objects.all(),
        error_messages={"does_not_exist": "No soul with the slug {value!r} exists."},
    )
    vessel = SlugField(
        slug_field="slug",
        queryset=Vessel.objects.all(),
        error_messages={"does_not_exist": "No vessel with the slug {value!r} exists."},
    )

    class Meta:
        model = Conversation
        fields = [
            "id",
            "soul",
            "vessel",
            "title",
            "temporary",
            "kind",
            "pinned_head",
            "pinned_at",
            "created_at",
        ]
        read_only_fields = ["id", "kind", "pinned_head", "pinned_at", "created_at"]
        extra_kwargs = {"title": {"required": False}, "temporary": {"required": False}}

    def validate_vessel(self, vessel: Vessel) -> Vessel:
        if not vessel.enabled:
            raise serializers.ValidationError(f"The vessel {vessel.slug!r} is switched off.")
        return vessel


class StrictCharField(serializers.CharField):
    """A text field that refuses numbers and booleans rather than quietly turning them into text."""

    default_error_messages = {"invalid": "Must be a string of text."}

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class SendMessageSerializer(serializers.Serializer):
    """What the household member sends: one message of text."""

    text = StrictCharField(trim_whitespace=True, allow_blank=False)

    def validate_text(self, text: str) -> str:
        limit = webui_settings.MAX_MESSAGE_CHARS
        if len(text) > limit:
            raise serializers.ValidationError(
                f"A message may be at most {limit} characters; this one has {len(text)}."
            )
        return text


class RenameSerializer(serializers.Serializer):
    """A new title for a conversation, and nothing else: other fields are refused by name."""

    title = StrictCharField(trim_whitespace=True, allow_blank=True)

    def validate_title(self, title: str) -> str:
        problem = title_problem(title)
        if problem:
            raise serializers.ValidationError(problem)
        return title

    def validate(self, attrs: dict) -> dict:
        others = (
            sorted(set(self.initial_data) - {"title"})
            if isinstance(self.initial_data, dict)
            else []
        )
        if others:
            raise serializers.ValidationError(
                {name: ["Only the title can be changed."] for name in others}
            )
        return attrs


class StrictUUIDField(serializers.UUIDField):
    """An id written as text; DRF's own field would take the number 7 for a UUID."""

    def to_internal_value(self, data: object) -> object:
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class RetrySerializer(serializers.Serializer):
    """Which message to answer again; without one, the newest unanswered message."""

    message = StrictUUIDField(required=False)


class StopSerializer(serializers.Serializer):
    """The running turn to stop, by the id its ``TurnStarted`` (or a 409) named."""

    turn_id = StrictUUIDField()
