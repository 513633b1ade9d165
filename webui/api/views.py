"""API views: thin, each one call into the turn service or a query."""

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webui.api.errors import error_response
from webui.api.open_replies import past_reply_cap
from webui.api.replies import turn_error_response, turn_response
from webui.api.serializers import (
    ConversationSerializer,
    RenameSerializer,
    RetrySerializer,
    SendMessageSerializer,
    StopSerializer,
)
from webui.api.streams import (
    EventStreamNegotiation,
    message_event_stream,
    retry_event_stream,
    wants_event_stream,
)
from webui.models import Conversation, Message
from webui.turns.lock import StopOutcome, request_stop
from webui.turns.service import TurnError, retry_turn, run_turn
from webui.web.conversations import ConversationError, delete_conversation, rename_conversation
from webui.web.messages_json import MessageSerializer, serialized_messages
from webui.web.selectors import SEARCH_MAX_CHARS, conversation_for, listed_conversations_for

TURN_REPLY = inline_serializer(
    "TurnReply",
    fields={
        "user": MessageSerializer(),
        "assistant": MessageSerializer(),
        "conversation": inline_serializer(
            "TurnConversation",
            fields={"id": serializers.UUIDField(), "title": serializers.CharField()},
        ),
    },
)
ERROR = inline_serializer(
    "Error",
    fields={
        "error": inline_serializer(
            "ErrorBody",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "details": serializers.DictField(),
            },
        )
    },
)
ERROR_WORDS = {
    400: "Not JSON, nested too deep, or a field is wrong: details name each field.",
    403: "Not logged in, or the CSRF token is missing.",
    404: "No such conversation for this member.",
    409: "A turn is running (turn_in_progress, its id in details.turn_id; nothing was saved or "
    "deleted), nothing to retry or the message is answered (nothing_to_retry, already_answered), "
    "the turn lost its hold on the conversation to another (turn_lost), no turn to stop "
    "(no_turn_running), or the turn to stop was no longer run by any process (turn_not_running: "
    "its lease lapsed; the conversation is freed and its partial reply kept, marked interrupted).",
    410: "The conversation was deleted while the reply was being written (conversation_deleted); "
    "nothing was saved.",
    413: "The body is over DATA_UPLOAD_MAX_MEMORY_SIZE.",
    415: "The body is not application/json.",
    429: "The member already has WEBUI_MAX_OPEN_REPLIES replies being written (too_many_replies, "
    "details.open_replies and details.limit); nothing was saved. Retry-After says when to try again.",
    502: "The vessel failed; details.user_message holds the message, kept for a retry.",
    503: "The soul's vault cannot be read (vault_unavailable), or the database stayed busy past "
    "the turn's budget (database_busy; reply_not_saved, the written reply's text in "
    "details.reply_text).",
}

#: The header a 429 carries: seconds before another reply may start.
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    OpenApiParameter.HEADER,
    response=[429],
    description="Seconds to wait before starting another reply.",
)


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """The documented error answers of one operation, all in the API's error shape."""
    return {status: OpenApiResponse(ERROR, description=ERROR_WORDS[status]) for status in statuses}


class ConversationListView(APIView):
    """``GET``: the viewer's conversations, most recently active first, temporary chats left out;
    ``?q=`` keeps those whose title or messages hold it. ``POST``: start one with a soul and a
    vessel."""

    serializer_class = ConversationSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q",
                str,
                description="Text in the title or any message, ignoring case "
                f"(at most {SEARCH_MAX_CHARS} characters).",
            )
        ],
        responses={200: ConversationSerializer(many=True), **errors(400, 403)},
    )
    def get(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        if len(query) > SEARCH_MAX_CHARS:
            words = f"A search may be at most {SEARCH_MAX_CHARS} characters; this has {len(query)}."
            raise serializers.ValidationError({"q": [words]})
        conversations = listed_conversations_for(request.user, query=query).select_related(
            "soul", "vessel"
        )
        return Response(ConversationSerializer(conversations, many=True).data)

    @extend_schema(responses={201: ConversationSerializer, **errors(400, 403, 413, 415)})
    def post(self, request: Request) -> Response:
        serializer = ConversationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        conversation = serializer.save(viewer=request.user, kind=Conversation.Kind.CHAT)
        return Response(ConversationSerializer(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailView(APIView):
    """``GET``: one of the viewer's conversations. ``PATCH``: rename it (``{"title"}`` only).
    ``DELETE``: delete it with its messages; the memory engine keeps what it learned from it."""

    serializer_class = ConversationSerializer

    def own(self, request: Request, conversation_id: str) -> Conversation:
        return conversation_for(request.user, conversation_id, "soul", "vessel")

    @extend_schema(responses={200: ConversationSerializer, **errors(403, 404)})
    def get(self, request: Request, conversation_id: str) -> Response:
        return Response(ConversationSerializer(self.own(request, conversation_id)).data)

    @extend_schema(
        request=RenameSerializer,
        responses={200: ConversationSerializer, **errors(400, 403, 404, 413, 415)},
    )
    def patch(self, request: Request, conversation_id: str) -> Response:
        conversation = self.own(request, conversation_id)
        serializer = RenameSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rename_conversation(conversation=conversation, title=serializer.validated_data["title"])
        return Response(ConversationSerializer(conversation).data)

    @extend_schema(responses={204: None, **errors(403, 404, 409)})
    def delete(self, request: Request, conversation_id: str) -> Response:
        conversation = self.own(request, conversation_id)
        try:
            delete_conversation(conversation=conversation)
        except ConversationError as error:
            return error_response(
                code=error.code,
                message=str(error),
                status_code=status.HTTP_409_CONFLICT,
                details=error.details,
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


class MessageListView(APIView):
    """``GET``: the conversation's messages. ``POST``: send one and get the reply (as server-sent
    events with ``Accept: text/event-stream``: :mod:`webui.api.streams`)."""

    serializer_class = MessageSerializer
    content_negotiation_class = EventStreamNegotiation

    @extend_schema(responses={200: MessageSerializer(many=True), **errors(403, 404)})
    def get(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_for(request.user, conversation_id)
        messages = list(conversation.messages.select_related("vessel").order_by("sequence"))
        return Response(serialized_messages(conversation, messages))

    @extend_schema(
        request=SendMessageSerializer,
        parameters=[RETRY_AFTER],
        responses={201: TURN_REPLY, **errors(400, 403, 404, 409, 410, 413, 415, 429, 502, 503)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_for(request.user, conversation_id, "soul", "vessel", "viewer")
        serializer = SendMessageSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if refusal := past_reply_cap(request.user.pk):
            return refusal
        if wants_event_stream(request):
            return message_event_stream(
                conversation=conversation, text=serializer.validated_data["text"]
            )
        try:
            result = run_turn(conversation=conversation, text=serializer.validated_data["text"])
        except TurnError as error:
            return turn_error_response(error)
        return turn_response(result)


def user_message_named(conversation: Conversation, message_id: object) -> Message:
    """The conversation's user message ``message_id``; a 400 naming the field otherwise."""
    message = conversation.messages.filter(pk=message_id, role=Message.Role.USER).first()
    if message is None:
        raise serializers.ValidationError(
            {"message": [f"No message of yours with the id {message_id} is in this conversation."]}
        )
    return message


class RetryView(APIView):
    """``POST``: answer an unanswered message again: ``message`` names it, or the newest one."""

    serializer_class = RetrySerializer
    content_negotiation_class = EventStreamNegotiation

    @extend_schema(
        request=RetrySerializer,
        parameters=[RETRY_AFTER],
        responses={201: TURN_REPLY, **errors(400, 403, 404, 409, 410, 429, 502, 503)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_for(request.user, conversation_id, "soul", "vessel", "viewer")
        serializer = RetrySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        message_id = serializer.validated_data.get("message")
        message = None if message_id is None else user_message_named(conversation, message_id)
        if refusal := past_reply_cap(request.user.pk):
            return refusal
        if wants_event_stream(request):
            return retry_event_stream(conversation=conversation, user_message=message)
        try:
            result = retry_turn(conversation=conversation, user_message=message)
        except TurnError as error:
            return turn_error_response(error)
        return turn_response(result)


class StopView(APIView):
    """``POST``: ask the conversation's running turn to stop; it saves what it has, marked stopped.
    202 only while a live process holds the turn; a turn whose process died (its lease lapsed) is
    not running: the conversation is freed, its partial reply kept marked interrupted, and the
    answer is 409 ``turn_not_running``."""

    serializer_class = StopSerializer

    @extend_schema(
        request=StopSerializer,
        responses={202: StopSerializer, **errors(400, 403, 404, 409, 413, 415)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_for(request.user, conversation_id)
        serializer = StopSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        turn_id = str(serializer.validated_data["turn_id"])
        outcome = request_stop(conversation=conversation, turn_id=turn_id)
        if outcome is StopOutcome.STOPPING:
            return Response({"turn_id": turn_id}, status=status.HTTP_202_ACCEPTED)
        if outcome is StopOutcome.LAPSED:
            return error_response(
                code="turn_not_running",
                message="Nothing was writing this reply any more (the server process running it "
                "ended), so there was nothing to stop. What had arrived is kept, marked "
                "interrupted, and you can send again.",
                status_code=status.HTTP_409_CONFLICT,
                details={"turn_id": turn_id},
            )
        return error_response(
            code="no_turn_running",
            message="No turn with that id is running in this conversation: it has ended.",
            status_code=status.HTTP_409_CONFLICT,
            details={"turn_id": turn_id},
        )
