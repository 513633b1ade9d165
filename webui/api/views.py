"""API views: thin, each one call into the turn service or a query."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webui.api.errors import error_response
from webui.api.serializers import ConversationSerializer, MessageSerializer, SendMessageSerializer
from webui.models import Conversation
from webui.selectors import conversations_for
from webui.turns import TurnError, TurnResult, retry_turn, run_turn

TURN_REPLY = inline_serializer(
    "TurnReply", fields={"user": MessageSerializer(), "assistant": MessageSerializer()}
)


def turn_response(result: TurnResult) -> Response:
    return Response(
        {
            "user": MessageSerializer(result.user_message).data,
            "assistant": MessageSerializer(result.assistant_message).data,
        },
        status=status.HTTP_201_CREATED,
    )


def turn_error_response(error: TurnError) -> Response:
    details = dict(error.details)
    if error.user_message is not None:
        details["user_message"] = MessageSerializer(error.user_message).data
    return error_response(
        code=error.code, message=error.message, status_code=error.status, details=details
    )


class ConversationListView(APIView):
    """``GET``: the viewer's conversations. ``POST``: start one with a soul and a vessel."""

    serializer_class = ConversationSerializer

    def get(self, request: Request) -> Response:
        conversations = conversations_for(request.user).select_related("soul", "vessel")
        return Response(ConversationSerializer(conversations, many=True).data)

    def post(self, request: Request) -> Response:
        serializer = ConversationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        conversation = serializer.save(viewer=request.user, kind=Conversation.Kind.CHAT)
        return Response(ConversationSerializer(conversation).data, status=status.HTTP_201_CREATED)


class MessageListView(APIView):
    """``GET``: the conversation's messages. ``POST``: send one and get the reply."""

    serializer_class = MessageSerializer

    def get(self, request: Request, conversation_id: str) -> Response:
        conversation = get_object_or_404(conversations_for(request.user), pk=conversation_id)
        messages = conversation.messages.select_related("vessel").order_by("sequence")
        return Response(MessageSerializer(messages, many=True).data)

    @extend_schema(request=SendMessageSerializer, responses={201: TURN_REPLY})
    def post(self, request: Request, conversation_id: str) -> Response:
        conversation = get_object_or_404(
            conversations_for(request.user).select_related("soul", "vessel", "viewer"),
            pk=conversation_id,
        )
        serializer = SendMessageSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            result = run_turn(conversation=conversation, text=serializer.validated_data["text"])
        except TurnError as error:
            return turn_error_response(error)
        return turn_response(result)


class RetryView(APIView):
    """``POST``: answer the conversation's last unanswered message again."""

    serializer_class = serializers.Serializer

    @extend_schema(request=None, responses={201: TURN_REPLY})
    def post(self, request: Request, conversation_id: str) -> Response:
        return self.retry(request, conversation_id)

    def retry(self, request: Request, conversation_id: str) -> Response:
        conversation = get_object_or_404(
            conversations_for(request.user).select_related("soul", "vessel", "viewer"),
            pk=conversation_id,
        )
        try:
            result = retry_turn(conversation=conversation)
        except TurnError as error:
            return turn_error_response(error)
        return turn_response(result)
