"""A member's cap on replies being written at once (``WEBUI_MAX_OPEN_REPLIES``).

Each reply holds a web thread while it is written (a stream for its whole length), so one member
with many tabs could take every thread of the site. A reply being written is a conversation of the
member whose turn lease is live (:mod:`webui.turns.lock`), so the count is the database's: it holds
across threads, processes and hosts, and a turn whose process was killed stops counting once its
lease lapses, without anyone cleaning up. The lease is compared with the database's clock.

The count is read before the turn claims its conversation, so requests that arrive at the same
instant may each see a free place; the cap can be passed by that many, never for long.
"""

from django.db.models.functions import Now
from rest_framework import status
from rest_framework.response import Response

from webui.api.errors import error_response
from webui.conf import webui_settings
from webui.models import Conversation

#: Seconds a refused member is asked to wait: about how long a short reply takes.
RETRY_AFTER_SECONDS = 5


def open_replies(member_id: int) -> int:
    """How many replies are being written now in ``member_id``'s conversations."""
    return Conversation.objects.filter(
        viewer_id=member_id, running_turn_id__isnull=False, turn_lease_until__gt=Now()
    ).count()


def past_reply_cap(member_id: int) -> Response | None:
    """The ``429 too_many_replies`` answer (with ``Retry-After``) when ``member_id`` already has
    ``WEBUI_MAX_OPEN_REPLIES`` replies being written; ``None`` when another may start (always,
    with the cap at 0)."""
    cap = webui_settings.MAX_OPEN_REPLIES
    if cap <= 0:
        return None
    running = open_replies(member_id)
    if running < cap:
        return None
    response = error_response(
        code="too_many_replies",
        message=f"You already have {running} replies being written (at most {cap} at once). "
        "Wait for one to finish, then send again; nothing was sent.",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        details={"open_replies": running, "limit": cap},
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
