"""The chat routes' refusal at a member's cap on replies being written (``WEBUI_MAX_OPEN_REPLIES``,
:mod:`webui.turns.reply_cap`).

The cap is taken atomically by the turn's claim; this is the same count read once before the turn
starts, so that a member plainly at the cap is refused in JSON with its status even on the
streaming route (whose turn runs after the response has begun). A send that passes this read
while others arrive at the same instant is still counted by its claim, and refused there.
"""

from rest_framework.response import Response

from webui.api.replies import turn_error_response
from webui.conf import webui_settings
from webui.turns.reply_cap import TooManyReplies, open_replies, too_many_replies


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
    return turn_error_response(too_many_replies(TooManyReplies(running=running, limit=cap)))
