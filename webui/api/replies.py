"""A turn's outcome as the chat API answers it: the 201 body, or the error body. One place, so
the JSON route and the event stream's ``done`` and ``error`` events say exactly the same."""

from rest_framework import status
from rest_framework.response import Response

from webui.api.errors import error_response
from webui.turns.events import TurnError, TurnResult
from webui.turns.reply_cap import RETRY_AFTER_SECONDS
from webui.web.messages_json import MessageSerializer, serialized_messages


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
    """The error body, with the saved user message (for a retry) in its details; a 429 says
    in ``Retry-After`` when to try again."""
    details = dict(error.details)
    if error.user_message is not None:
        details["user_message"] = MessageSerializer(error.user_message).data
    response = error_response(
        code=error.code, message=error.message, status_code=error.status, details=details
    )
    if error.status == status.HTTP_429_TOO_MANY_REQUESTS:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
