"""Memory that stays true, as JSON (:mod:`pippa_memory.items.truth`): ``POST /api/memory/items/``
adds a memory (``{"text", "scope"}``), ``.../items/<id>/correct/`` gives one new words
(``{"text"}``: they replace it, by the member's own decision) and ``.../items/<id>/restore/``
makes a replaced one current again.

The page's rules: who may forget a memory may correct or restore it (the member who said it, or a
memory manager for a household one: else ``not_yours`` 403); one the member may not see is
``not_found`` 404; bad words or scope are a 400 naming the field; an engine that is down, or an
answer it did not give, is ``memory_unavailable`` 503 and may be asked again (adding the same
words again is the same memory; a correction that did happen answers ``not_current`` 409, and
the listing shows it). Nothing here takes a memory out of anyone's view, so nothing is treated as
done unconfirmed and no conversation re-pins: a pinned conversation keeps the block it pinned, and
a chat begun afterwards carries what is current.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from pippa_memory.items import services, truth
from pippa_memory.items.api import (
    ERROR_WORDS,
    ItemListView,
    ItemSerializer,
    MemoryAPIView,
    SoulQuerySerializer,
    item_json,
    refusal_response,
    soul_of,
)
from pippa_memory.items.turn_links import own_turn_urls
from pippa_memory.models import Scope
from webui.api.errors import error_response
from webui.api.views import ERROR

TRUTH_ERRORS = {
    **ERROR_WORDS,
    400: "The words or the scope are wrong (details name the field): nothing was changed.",
    409: "A newer memory replaced this one (not_current): restore it first, then correct it.",
}


class WordsSerializer(serializers.Serializer):
    text = serializers.CharField(
        max_length=truth.MOST_CHARS, help_text="The memory in words, up to 2,000 characters."
    )


class AddSerializer(WordsSerializer):
    scope = serializers.ChoiceField(
        choices=[Scope.PRIVATE.value, Scope.HOUSEHOLD.value],
        help_text="private: only the member sees it; household: everyone does.",
    )


class KeptSerializer(serializers.Serializer):
    item = ItemSerializer(help_text="The memory as it now is (a correction: the new one).")


def truth_errors(*statuses: int) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(ERROR, description=TRUTH_ERRORS[code]) for code in statuses}


def kept_response(request: Request, item: services.MemoryItem, status: int = 200) -> Response:
    urls = own_turn_urls(user=request.user, items=[item])
    return Response({"item": item_json(request, item, urls.get(item.id))}, status=status)


def truth_refusal(refusal: services.MemoryRefusal) -> Response:
    """A refusal in the API's shape; bad words name the ``text`` field."""
    if refusal.code == "invalid":
        return error_response(
            code="invalid",
            message=f"text: {refusal.message}",
            status_code=400,
            details={"text": [refusal.message]},
        )
    return refusal_response(refusal)


class ItemsView(ItemListView):
    """``GET``: the listing (:class:`~pippa_memory.items.api.ItemListView`). ``POST``
    ``{"text", "scope"}``: keep a memory the member writes, as ``remember`` would (the same words
    of the same member and scope are one memory, made the most recent)."""

    refused = staticmethod(truth_refusal)

    @extend_schema(
        parameters=[SoulQuerySerializer],
        request=AddSerializer,
        responses={201: KeptSerializer, **truth_errors(400, 403, 503)},
    )
    def post(self, request: Request) -> Response:
        soul = soul_of(request)
        body = AddSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        item = truth.add_memory(soul=soul, user=request.user, **body.validated_data)
        return kept_response(request, item, status=201)


class CorrectView(MemoryAPIView):
    """``POST`` ``{"text"}``: new words that replace the memory (it stays in history, and can be
    restored); the answer is the new memory, whose ``supersedes`` is the old."""

    serializer_class = WordsSerializer
    refused = staticmethod(truth_refusal)

    @extend_schema(
        parameters=[SoulQuerySerializer],
        request=WordsSerializer,
        responses={200: KeptSerializer, **truth_errors(400, 403, 404, 409, 503)},
    )
    def post(self, request: Request, item_id: str) -> Response:
        soul = soul_of(request)
        body = WordsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        text = body.validated_data["text"]
        item = truth.correct_memory(soul=soul, user=request.user, item_id=item_id, text=text)
        return kept_response(request, item)


class RestoreView(MemoryAPIView):
    """``POST``: make a replaced memory current again (a current one: no change); new chats
    carry it from now on."""

    serializer_class = serializers.Serializer
    refused = staticmethod(truth_refusal)

    @extend_schema(
        parameters=[SoulQuerySerializer],
        request=None,
        responses={200: KeptSerializer, **truth_errors(400, 403, 404, 503)},
    )
    def post(self, request: Request, item_id: str) -> Response:
        item = truth.restore_memory(soul=soul_of(request), user=request.user, item_id=item_id)
        return kept_response(request, item)
