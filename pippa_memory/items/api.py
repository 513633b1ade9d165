"""The memory page as JSON: ``/api/memory/items/`` (list and search, with what a new chat of the
member's carries), ``.../items/<id>/`` (DELETE forgets, PATCH changes the scope or the *keep in
every chat* mark) and, for a memory manager, ``.../members/<member>/forget/``. Each item carries
what it replaced (``supersedes``), ``superseded_by`` and the stored ``decision`` (contract v3);
the listing's first page also carries the replaced memories that show under no current one.
Adding, correcting and restoring are :mod:`pippa_memory.items.truth_api`.

Session-authenticated with CSRF like the rest of the API, errors in its one shape. Each view is
one call into :mod:`pippa_memory.items.services`; its refusals keep their code and status (``not_found``
404, ``not_yours`` 403, ``no_owner`` 409, ``invalid_cursor`` 400), and an engine that is down or
memory switched off is ``memory_unavailable`` 503 with the reason: never an empty list. A forget or
make-private the engine did not confirm (its answer lost) was treated as done for privacy: it is
answered ``202`` with ``"confirmed": false`` and a ``message`` that says so; a confirmed change is
``200`` with ``"confirmed": true``.
"""

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pippa_memory.items import changes, services
from pippa_memory.items.turn_links import own_turn_urls
from pippa_memory.models import Scope
from webui.api.errors import error_response
from webui.api.views import ERROR
from webui.models import Soul

QUERY_LENGTH = services.QUERY_LENGTH


class SoulQuerySerializer(serializers.Serializer):
    soul = serializers.SlugField(max_length=50, help_text="The soul's slug.")

    def validate_soul(self, slug: str) -> Soul:
        soul = Soul.objects.filter(slug=slug).first()
        if soul is None:
            raise serializers.ValidationError(f"No soul is called {slug!r}.")
        return soul


class ItemQuerySerializer(SoulQuerySerializer):
    q = serializers.CharField(max_length=QUERY_LENGTH, required=False, allow_blank=True)
    cursor = serializers.CharField(
        max_length=services.CURSOR_LENGTH,
        required=False,
        allow_blank=True,
        help_text="A listing's ``next``.",
    )


class ItemChangeSerializer(serializers.Serializer):
    """A change to one item: its scope, or its *keep in every chat* mark. One at a time: a scope
    change has its own privacy steps and outcomes, and one request is one change, done or not."""

    scope = serializers.ChoiceField(choices=Scope.values, required=False)
    keep = serializers.BooleanField(
        required=False, help_text="Mark (true) or unmark (false) it keep in every chat."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(attrs) != 1:
            raise serializers.ValidationError(
                "Give either scope or keep (change one, then the other, in two requests)."
            )
        return attrs


class SaidBySerializer(serializers.Serializer):
    member = serializers.CharField()
    name = serializers.CharField()


class SourceSerializer(serializers.Serializer):
    """Where the item was said: only for the viewer's own chats, null for anyone else's."""

    conversation = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_null=True)
    tool_use = serializers.CharField(allow_null=True)


class SupersedesSerializer(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    at = serializers.CharField(help_text="When it was replaced.")


class SupersededBySerializer(serializers.Serializer):
    id = serializers.CharField()
    at = serializers.CharField(help_text="When it was replaced.")


class DecisionSerializer(serializers.Serializer):
    """The last decision about the memory: the brain door's, or a member's own."""

    choice = serializers.CharField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True, min_value=0, max_value=1)
    reason = serializers.CharField()
    brain_call = serializers.CharField(allow_null=True, help_text="The door call's webhook id.")
    judged_by = serializers.CharField(help_text="The vessel that judged it, or the member.")
    outcome = serializers.ChoiceField(
        choices=["replaced", "adds nothing", "kept both", "door failed", "corrected", "restored"]
    )
    at = serializers.CharField()


class ItemSerializer(serializers.Serializer):
    """An item in the engine's shape, with what the viewer may do and the link to its turn."""

    id = serializers.CharField()
    text = serializers.CharField()
    at = serializers.CharField()
    scope = serializers.ChoiceField(choices=Scope.values)
    said_by = SaidBySerializer(allow_null=True)
    source = SourceSerializer()
    yours = serializers.BooleanField()
    may_forget = serializers.BooleanField()
    may_change_scope = serializers.BooleanField()
    keep = serializers.BooleanField(help_text="Marked keep in every chat.")
    may_keep = serializers.BooleanField(help_text="The viewer may mark or unmark it.")
    in_new_chats = serializers.BooleanField(help_text="A chat the viewer began now would carry it.")
    turn_url = serializers.CharField(allow_null=True, help_text="Only for the viewer's own chats.")
    supersedes = SupersedesSerializer(
        allow_null=True, help_text="The memory this one replaced, when the viewer may see it."
    )
    superseded_by = SupersededBySerializer(
        allow_null=True, help_text="Set: a newer memory the viewer sees replaced this one."
    )
    decision = DecisionSerializer(allow_null=True)
    may_correct = serializers.BooleanField(
        help_text="The viewer may correct it, or restore it (or what it replaced)."
    )


class MemberCountSerializer(serializers.Serializer):
    member = serializers.CharField()
    name = serializers.CharField()
    private_items = serializers.IntegerField()


class NewChatsSerializer(serializers.Serializer):
    carries = serializers.IntegerField(help_text="Memories a chat begun now would carry.")
    memories = serializers.IntegerField(
        allow_null=True, help_text="Memories the member may see in all; null when not known."
    )


class ListingSerializer(serializers.Serializer):
    soul = serializers.CharField()
    revision = serializers.CharField()
    new_chats = NewChatsSerializer(
        allow_null=True, help_text="Null when the engine's head could not be read."
    )
    items = ItemSerializer(many=True)
    next = serializers.CharField(
        allow_null=True, help_text="Pass as ``cursor`` for older services."
    )
    members = MemberCountSerializer(
        many=True, allow_null=True, help_text="Memory managers only: counts, never text."
    )
    replaced = ItemSerializer(
        many=True,
        help_text="First page only (no cursor): up to 20 replaced memories matching q that show "
        "under no current memory (what replaced them was forgotten, replaced in turn or is no "
        "longer shared with the viewer), so they can be restored.",
    )


class ChangeSerializer(serializers.Serializer):
    revision = serializers.CharField(
        allow_null=True, help_text="The engine's revision after the change; null when unknown."
    )
    repinned = serializers.IntegerField(help_text="Conversations that re-pin at their next turn.")
    confirmed = serializers.BooleanField(
        help_text="False (with 202): the engine did not confirm; treated as done for privacy."
    )
    message = serializers.CharField(
        required=False, help_text="Only when not confirmed: what happened, in words."
    )


class ForgottenSerializer(ChangeSerializer):
    forgotten = serializers.CharField()


class RescopedSerializer(ChangeSerializer):
    item = ItemSerializer()


class ForgottenMemberSerializer(ChangeSerializer):
    forgotten = serializers.IntegerField(help_text="How many items the member had said.")


ERROR_WORDS = {
    400: "A parameter is wrong (details name it), or the cursor is not one the engine gave.",
    403: "Not logged in, the CSRF token is missing, or the memory is someone else's (not_yours).",
    404: "No such memory, or not one this member can see.",
    409: "An unattended run's memory has no member to keep it private (no_owner).",
    503: "Memory is unavailable (switched off, or the engine down): details.reason says why. "
    "Nothing was changed.",
}


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    return {status: OpenApiResponse(ERROR, description=ERROR_WORDS[status]) for status in statuses}


def refusal_response(refusal: services.MemoryRefusal) -> Response:
    details = {"reason": refusal.reason} if refusal.reason else {}
    return error_response(
        code=refusal.code, message=refusal.message, status_code=refusal.status, details=details
    )


#: The ``source`` of an item that did not come from one of the viewer's own chats.
NO_SOURCE = {"conversation": None, "message": None, "tool_use": None}


def item_json(
    request: Request,
    item: services.MemoryItem,
    turn_url: str | None,
    new_chats: services.NewChatMemory | None = None,
) -> dict[str, Any]:
    """``item`` in the engine's shape with what the viewer may do, and whether a chat of theirs
    begun now carries it (``new_chats``: the head as they see it; not known, it is false). Its
    ``source`` ids show only when it came from one of the viewer's own chats (``turn_url`` is then
    set): another member's conversation and message ids, or an unattended run's, show as null."""
    user = request.user
    shape = item.as_engine_shape()
    return {
        **shape,
        "source": shape["source"] if turn_url else NO_SOURCE,
        "yours": services.said_it(user, item),
        "may_forget": services.may_forget(user, item),
        "may_change_scope": services.may_change_scope(user, item),
        "may_keep": services.may_keep(user, item),
        "in_new_chats": new_chats is not None and item.id in new_chats.carries,
        "turn_url": turn_url,
        "supersedes": item.supersedes,
        "superseded_by": item.superseded_by,
        "decision": item.decision,
        "may_correct": services.may_forget(user, item),
    }


def new_chat_memory(*, soul: Soul, user: Any) -> services.NewChatMemory | None:
    """What a new chat of ``user``'s carries, or ``None`` when the head cannot be read (the
    listing stands on its own)."""
    try:
        return services.fetch_new_chat_memory(soul=soul, user=user)
    except services.MemoryRefusal:
        return None


def change_response(changed: changes.Changed, **fields: Any) -> Response:
    """A change as done, as :class:`ChangeSerializer` has it: ``fields`` (what changed), the
    engine's new revision, how many conversations re-pin, and whether the engine confirmed it
    (``200``) or not (``202``, with the words: it was treated as done for privacy)."""
    body = {
        **fields,
        "revision": changed.revision,
        "repinned": changed.repinned.conversations,
        "confirmed": changed.confirmed,
    }
    if changed.confirmed:
        return Response(body)
    return Response({**body, "message": changed.unconfirmed_words()}, status=202)


def soul_of(request: Request) -> Soul:
    query = SoulQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data["soul"]


class MemoryAPIView(APIView):
    """A view into memory: a refusal of :mod:`~pippa_memory.items.services` that its handler
    does not answer itself is answered by ``refused`` (its code and status, in the API's error
    shape: :func:`refusal_response`)."""

    refused: Callable[[services.MemoryRefusal], Response] = staticmethod(refusal_response)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, services.MemoryRefusal):
            return self.refused(exc)
        return super().handle_exception(exc)


class ItemListView(MemoryAPIView):
    """``GET``: the items the member may see of one soul, newest first; ``q`` searches."""

    serializer_class = ListingSerializer

    @extend_schema(
        parameters=[ItemQuerySerializer],
        responses={200: ListingSerializer, **errors(400, 403, 503)},
    )
    def get(self, request: Request) -> Response:
        query = ItemQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        soul, user = query.validated_data["soul"], request.user
        # The listing answers its own refusals: a subclass may answer its other methods' in
        # other words (:class:`~pippa_memory.items.truth_api.ItemsView` names the text field).
        try:
            listing = services.fetch_items_page(
                soul=soul,
                user=user,
                q=query.validated_data.get("q", ""),
                cursor=query.validated_data.get("cursor", ""),
            )
            q = query.validated_data.get("q", "")
            orphans = (
                []
                if query.validated_data.get("cursor")
                else services.fetch_orphaned(soul=soul, user=user, q=q)
            )
            members = (
                services.fetch_member_counts(soul=soul, user=user)
                if services.may_manage(user)
                else None
            )
        except services.MemoryRefusal as refusal:
            return refusal_response(refusal)
        urls = own_turn_urls(user=user, items=[*listing.items, *orphans])
        carried = new_chat_memory(soul=soul, user=user)
        new_chats = None
        if carried is not None:
            new_chats = {"carries": len(carried.carries), "memories": carried.memories}
        return Response(
            {
                "soul": soul.slug,
                "revision": listing.revision,
                "new_chats": new_chats,
                "items": [item_json(request, i, urls.get(i.id), carried) for i in listing.items],
                "next": listing.next,
                "members": None if members is None else [vars(m) for m in members],
                "replaced": [item_json(request, i, urls.get(i.id)) for i in orphans],
            }
        )


def change_schema(answer: Any, *codes: int, request: Any = None) -> Any:
    """The schema of a change to memory: ``answer`` with 200 when the engine confirmed it, and
    with 202 when it did not and the change was treated as done for privacy; the error ``codes``."""
    return extend_schema(
        parameters=[SoulQuerySerializer],
        request=request,
        responses={200: answer, 202: answer, **errors(*codes)},
    )


class ItemView(MemoryAPIView):
    """``DELETE``: forget the item. ``PATCH`` ``{"scope"}``: make it private or household;
    ``{"keep"}``: mark it keep in every chat, or unmark it (one of the two per request)."""

    serializer_class = ItemChangeSerializer

    @change_schema(ForgottenSerializer, 400, 403, 404, 503)
    def delete(self, request: Request, item_id: str) -> Response:
        changed = changes.forget_item(soul=soul_of(request), user=request.user, item_id=item_id)
        return change_response(changed, forgotten=item_id)

    @change_schema(RescopedSerializer, 400, 403, 404, 409, 503, request=ItemChangeSerializer)
    def patch(self, request: Request, item_id: str) -> Response:
        soul = soul_of(request)
        body = ItemChangeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        wanted, user = body.validated_data, request.user
        if "keep" in wanted:
            changed = changes.set_keep(soul=soul, user=user, item_id=item_id, keep=wanted["keep"])
        else:
            changed = changes.change_scope(
                soul=soul, user=user, item_id=item_id, scope=wanted["scope"]
            )
        item = changed.item
        urls = own_turn_urls(user=request.user, items=[item])
        return change_response(changed, item=item_json(request, item, urls.get(item.id)))


class MemberForgetView(MemoryAPIView):
    """``POST``: for a memory manager, forget everything one member said to the soul."""

    serializer_class = serializers.Serializer

    @change_schema(ForgottenMemberSerializer, 400, 403, 404, 503)
    def post(self, request: Request, member: str) -> Response:
        changed = changes.forget_member(soul=soul_of(request), user=request.user, member=member)
        return change_response(changed, forgotten=changed.count)
