"""``GET /api/ledger/?conversation=<id>``: a conversation's cache ledger, for staff.

Each of the conversation's vessel calls, oldest first, as :mod:`webui.ledger.recorder` recorded it: the
provider-reported usage, the stable prefix's length and section hashes, and its drift. Rows hold
keyed hashes and counts only, never prompt text, so the ledger shows no member's words to
anyone and no guess can be checked against it; it is still the household's operations data, so it
is for staff holding the ``view_vesselcall`` permission (a member, or staff without it, gets 403).
"""

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webui.api.views import ERROR
from webui.models import Conversation, VesselCall


class CanReadLedger(permissions.BasePermission):
    """Staff holding the view permission on the ledger's rows (a superuser holds every one)."""

    message = "The cache ledger is for staff who may view vessel calls."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_staff and user.has_perm("webui.view_vesselcall"))


class LedgerQuerySerializer(serializers.Serializer):
    conversation = serializers.UUIDField(help_text="The conversation whose calls to list.")


class UsageSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField(
        help_text="The whole prompt as the provider counted it, the part read from cache included."
    )
    output_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField(help_text="The part read from the prompt cache.")
    cache_write_tokens = serializers.IntegerField(
        help_text="The part written to the prompt cache (Anthropic only reports one; 0 elsewhere)."
    )


class DriftSerializer(serializers.Serializer):
    section = serializers.CharField(
        help_text="The first section that moved: tools, vault, memory, disclosure, history, turn, "
        "or vessel (same bytes, another vessel or model)."
    )
    cause = serializers.CharField(
        allow_null=True, help_text="Why, where it is known; null: no known cause (a defect)."
    )


class VesselCallSerializer(serializers.Serializer):
    message = serializers.UUIDField(
        source="user_message_id", help_text="The user message whose turn made the call."
    )
    round = serializers.IntegerField(help_text="0: the turn's first call; n: after n tool rounds.")
    vessel = serializers.SerializerMethodField(help_text="The vessel's slug (null once deleted).")
    model = serializers.CharField()
    usage = serializers.SerializerMethodField()
    prefix_bytes = serializers.IntegerField()
    sections = serializers.DictField(
        child=serializers.CharField(),
        help_text="Each section of the stable prefix: its hash, keyed with the site's secret (HMAC-SHA256).",
    )
    drift = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_vessel(self, call: VesselCall) -> str | None:
        return call.vessel.slug if call.vessel else None

    @extend_schema_field(UsageSerializer)
    def get_usage(self, call: VesselCall) -> dict[str, int]:
        return {
            "input_tokens": call.input_tokens,
            "output_tokens": call.output_tokens,
            "cache_read_tokens": call.cache_read_tokens,
            "cache_write_tokens": call.cache_write_tokens,
        }

    @extend_schema_field(DriftSerializer(allow_null=True))
    def get_drift(self, call: VesselCall) -> dict[str, str | None] | None:
        if not call.drift_section:
            return None
        return {"section": call.drift_section, "cause": call.drift_cause or None}


class LedgerView(APIView):
    """``GET``: the conversation's vessel calls, oldest first. A missing or malformed
    ``conversation`` is a 400 naming the parameter; an unknown one a 404."""

    permission_classes = [permissions.IsAuthenticated, CanReadLedger]
    serializer_class = VesselCallSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "conversation", str, required=True, description="The conversation's id (a UUID)."
            )
        ],
        responses={
            200: VesselCallSerializer(many=True),
            400: OpenApiResponse(ERROR, description="`conversation` is missing or not a UUID."),
            403: OpenApiResponse(
                ERROR, description="Not logged in, or not staff who may view vessel calls."
            ),
            404: OpenApiResponse(ERROR, description="No such conversation."),
        },
    )
    def get(self, request: Request) -> Response:
        query = LedgerQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        conversation_id = query.validated_data["conversation"]
        conversation = Conversation.objects.filter(pk=conversation_id).first()
        if conversation is None:
            raise NotFound(f"No conversation has the id {conversation_id}.")
        calls = conversation.vessel_calls.select_related("vessel").order_by("id")
        return Response(VesselCallSerializer(calls, many=True).data)
