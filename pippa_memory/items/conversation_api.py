"""One conversation's memory as JSON: ``GET /api/memory/conversations/<id>/`` (what its pinned
block holds for its member, and how many memories came since) and ``POST .../refresh/`` (bring it
up to date at its next turn: one recorded re-pin, reason ``member_refresh``).

Only the conversation's own member: anyone else, staff included, gets 404 as on the other
conversation routes. A member may refresh ``PIPPA_MEMORY_REFRESH_RATE`` times a window (each is a
re-pin, a prompt-cache miss and a pin record); past it 429 ``too_many_refreshes`` with
``Retry-After``, nothing changed. An engine that is down, or memory switched off, is ``memory_unavailable``
503 with the reason, as on the other memory routes; a refresh then changes nothing.
"""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from pippa_memory.brain.throttles import configured_rate, take_a_place
from pippa_memory.items.api import MemoryAPIView, errors
from pippa_memory.items.conversation_memory import (
    REFRESH_COST,
    ConversationMemory,
    conversation_memory,
    refresh_conversation,
)
from pippa_memory.items.wording import said_words, scope_words
from webui.api.errors import error_response
from webui.api.views import ERROR
from webui.models import Conversation
from webui.web.selectors import conversations_for


class PinnedItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    at = serializers.CharField()
    scope = serializers.CharField()
    scope_words = serializers.CharField(help_text="“Private to you” or “Household”.")
    said = serializers.CharField(help_text="Who it came from, in words: “You said it”, …")


class ConversationMemorySerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=["pinned", "absent", "too_large", "unusable", "waiting", "temporary"],
        help_text="too_large, unusable: no memory, as the summary says (never 'out of reach').",
    )
    heading = serializers.CharField(help_text="What the panel holds, and when it was taken.")
    summary = serializers.CharField(help_text="At most one sentence more; may be empty.")
    line = serializers.CharField(help_text="The closed panel's one line.")
    pinned_at = serializers.DateTimeField(allow_null=True)
    revision = serializers.CharField(allow_null=True)
    items = PinnedItemSerializer(many=True)
    newer = serializers.IntegerField(help_text="Memories the member may see, since the pin.")
    newer_text = serializers.CharField(help_text="What came since, in a sentence; may be empty.")
    can_refresh = serializers.BooleanField(help_text="Whether “Bring up to date” is offered.")
    answer = serializers.CharField(
        help_text="An ask's answer waiting, in a sentence; may be empty."
    )
    refresh_cost = serializers.CharField()


class RefreshSerializer(ConversationMemorySerializer):
    refreshed = serializers.CharField(help_text="What happens now, in a sentence.")


def own_chat(request: Request, conversation_id: str) -> Conversation:
    conversation = (
        conversations_for(request.user).select_related("soul").filter(pk=conversation_id).first()
    )
    if conversation is None:
        raise NotFound("No such conversation for this member.")
    return conversation


def memory_json(request: Request, memory: ConversationMemory, soul_name: str) -> dict[str, Any]:
    items = [
        {
            "id": item.id,
            "text": item.text,
            "at": item.at_text,
            "scope": item.scope,
            "scope_words": scope_words(item.scope),
            "said": said_words(request.user, item, soul_name=soul_name),
        }
        for item in memory.items
    ]
    return {
        "state": memory.state,
        "heading": memory.heading,
        "summary": memory.summary,
        "line": memory.line,
        "pinned_at": memory.pinned_at.isoformat() if memory.pinned_at else None,
        "revision": memory.revision,
        "items": items,
        "newer": memory.newer,
        "newer_text": memory.newer_text,
        "can_refresh": memory.can_refresh,
        "answer": memory.answer,
        "refresh_cost": REFRESH_COST,
    }


def past_refresh_rate(request: Request) -> Response | None:
    """429 ``too_many_refreshes`` with ``Retry-After`` when the member has brought chats up to
    date ``PIPPA_MEMORY_REFRESH_RATE`` times in its window already (counted in the shared cache,
    so across every process); ``None`` when this one may go on."""
    rate = configured_rate("REFRESH_RATE")
    if rate is None:
        return None
    wait = take_a_place(scope="member-refresh", caller=str(request.user.pk), rate=rate)
    if wait is None:
        return None
    response = error_response(
        code="too_many_refreshes",
        message=f"This chat's memory was brought up to date {rate.calls} times already in a "
        f"short while; each one makes the next reply start afresh. Try again in {wait} s.",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        details={"limit": rate.calls, "seconds": rate.seconds},
    )
    response["Retry-After"] = str(wait)
    return response


class ConversationMemoryView(MemoryAPIView):
    """``GET``: what the conversation's pinned memory holds for its member, and what came since."""

    serializer_class = ConversationMemorySerializer

    @extend_schema(responses={200: ConversationMemorySerializer, **errors(403, 404, 503)})
    def get(self, request: Request, conversation_id: str) -> Response:
        conversation = own_chat(request, conversation_id)
        memory = conversation_memory(conversation=conversation, user=request.user)
        return Response(memory_json(request, memory, conversation.soul.name))


class ConversationRefreshView(MemoryAPIView):
    """``POST``: bring the conversation's memory up to date at its next message (one re-pin)."""

    serializer_class = RefreshSerializer

    @extend_schema(
        request=None,
        responses={
            200: RefreshSerializer,
            **errors(403, 404, 503),
            409: OpenApiResponse(ERROR, description="A temporary chat (not_remembered)."),
            429: OpenApiResponse(
                ERROR,
                description="The member brought chats up to date PIPPA_MEMORY_REFRESH_RATE "
                "times already (too_many_refreshes); nothing changed. Retry-After says when "
                "to try again.",
            ),
        },
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = own_chat(request, conversation_id)
        if refusal := past_refresh_rate(request):
            return refusal
        refresh_conversation(conversation=conversation, user=request.user)
        memory = conversation_memory(conversation=conversation, user=request.user)
        soul = conversation.soul.name
        body = memory_json(request, memory, soul)
        # The same words as the heading: the page shows the heading, never both.
        body["refreshed"] = f"{soul} takes her memory afresh at your next message."
        return Response(body)
