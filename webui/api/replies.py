"""A turn's outcome as the chat API answers it: the 201 body, or the error body. One place, so
the JSON route and the event stream's ``done`` and ``error`` events say exactly the same."""

from rest_framework import status
from rest_framework.response import Response

from webui.api.errors import error_response
from webui.api.serializers import MessageSerializer, serialized_messages
from webui.turns.events import TurnError, TurnResult


def turn_response(result: TurnResult) -> Response:
    """The 201 body: the saved user message and the reply, each with its notes (what rode the
    turn, shown under the reply), and the conversation's id and title (a first turn gives an
    untitled conversation one, which the page then shows at once)."""
    conversation = result.assistant_message.conversation
    user, assistant = serialized_messages(
        conversation, [result.user_message, result.assistant_message]
    )
    return Response(
        {
            "user": user,
            "assistant": assistant,
            "conversation": {"id": str(conversation.pk), "title": conversation.title},
        },
        status=status.HTTP_201_CREATED,
    )


def turn_error_response(error: TurnError) -> Response:
    """The error body, with the saved user message (for a retry) in its details."""
    details = dict(error.details)
    if error.user_message is not None:
        details["user_message"] = MessageSerializer(error.user_message).data
    return error_response(
        code=error.code, message=error.message, status_code=error.status, details=details
    )
