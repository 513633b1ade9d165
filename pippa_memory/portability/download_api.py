"""``GET /api/memory/export/?soul=<slug>&format=json|markdown``: a member downloads what they may see
of a soul's memory (:mod:`pippa_memory.portability.member_download`), streamed as it is read from
the engine. Session-authenticated like the rest of the memory API; an engine that is down is
``503 memory_unavailable`` before anything is sent."""

from itertools import chain
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from pippa_memory.items import services
from pippa_memory.items.api import SoulQuerySerializer, errors, refusal_response
from pippa_memory.portability import member_download

KINDS = {
    "json": ("application/x-ndjson; charset=utf-8", "jsonl", member_download.json_lines),
    "markdown": ("text/markdown; charset=utf-8", "md", member_download.markdown),
}


class DownloadQuerySerializer(SoulQuerySerializer):
    format = serializers.ChoiceField(choices=sorted(KINDS), default="json")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A query string is read as a form, where an empty value falls back to the default:
        # ``format=`` names no download, so it is refused rather than taken as JSON.
        given = self.initial_data.get("format")
        if given is not None and given not in KINDS:
            raise serializers.ValidationError(
                {"format": [f"Choose one of: {', '.join(sorted(KINDS))}."]}
            )
        return super().validate(attrs)


class MemoryDownloadView(APIView):
    """``GET``: every memory the member may see of one soul, as JSON Lines
    (``docs/memory-export.md``, kind ``member``) or one Markdown page grouped by month."""

    serializer_class = DownloadQuerySerializer

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # ``format`` names the download here, not one of DRF's renderers: errors are JSON.
        return JSONRenderer(), JSONRenderer.media_type

    @extend_schema(
        parameters=[DownloadQuerySerializer],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                response=OpenApiTypes.STR, description="JSON Lines download (format=json)."
            ),
            (200, "text/markdown"): OpenApiResponse(
                response=OpenApiTypes.STR, description="Markdown download (format=markdown)."
            ),
            **errors(400, 403, 503),
        },
    )
    def get(self, request: Request) -> Any:
        query = DownloadQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        soul, kind = query.validated_data["soul"], query.validated_data["format"]
        content_type, suffix, render = KINDS[kind]
        memories = member_download.visible_memories(soul=soul, user=request.user)
        try:
            first = next(memories, None)
        except services.MemoryRefusal as refusal:
            return refusal_response(refusal)
        rest = memories if first is None else chain([first], memories)
        body = (
            text.encode("utf-8") for text in render(soul=soul, user=request.user, memories=rest)
        )
        response = StreamingHttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{soul.slug}-memory.{suffix}"'
        response["Cache-Control"] = "no-store"
        return response
