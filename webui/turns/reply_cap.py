"""A member's cap on replies being written at once (``WEBUI_MAX_OPEN_REPLIES``).

Each reply holds a web thread while it is written (a stream for its whole length), so one member
with many tabs could take every thread of the site. A reply being written is a conversation of the
member whose turn lease is live (:mod:`webui.turns.lock`), so the count is the database's: it holds
across threads, processes and hosts, and a turn whose process was killed stops counting once its
lease lapses, without anyone cleaning up. The lease is compared with the database's clock.

The cap is taken with the claim, in one transaction (:func:`webui.turns.lock.claim_turn`): the
member's row is locked first (``FOR NO KEY UPDATE`` on PostgreSQL; SQLite's ``IMMEDIATE``
transaction holds the whole database), then the live leases are counted, then the turn claims its
conversation. Two sends at the same instant therefore count one after the other, and the member
never has more than the cap being written, however many arrive at once.
"""

from django.contrib.auth import get_user_model
from django.db.models.functions import Now

from webui.conf import webui_settings
from webui.models import Conversation
from webui.turns.events import TurnError

#: Seconds a refused member is asked to wait: about how long a short reply takes.
RETRY_AFTER_SECONDS = 5


class TooManyReplies(Exception):
    """The member already has ``limit`` replies being written (``running`` of them)."""

    def __init__(self, *, running: int, limit: int) -> None:
        super().__init__(f"{running} replies being written, at most {limit}")
        self.running = running
        self.limit = limit


def open_replies(member_id: int) -> int:
    """How many replies are being written now in ``member_id``'s conversations."""
    return Conversation.objects.filter(
        viewer_id=member_id, running_turn_id__isnull=False, turn_lease_until__gt=Now()
    ).count()


def check_reply_cap(member_id: int | None) -> None:
    """:class:`TooManyReplies` when ``member_id`` already has ``WEBUI_MAX_OPEN_REPLIES`` replies
    being written; nothing with no member (an unattended run) or the cap at 0.

    Inside a transaction, the member's row is locked first, so the count and the claim that
    follows it in the same transaction are one step for every other claim of that member."""
    cap = webui_settings.MAX_OPEN_REPLIES
    if member_id is None or cap <= 0:
        return
    members = get_user_model().objects.filter(pk=member_id)
    list(members.select_for_update(no_key=True).values_list("pk", flat=True))
    running = open_replies(member_id)
    if running >= cap:
        raise TooManyReplies(running=running, limit=cap)


def too_many_replies(refusal: TooManyReplies) -> TurnError:
    """429 ``too_many_replies``: nothing was saved; ``details`` say how many and the cap."""
    return TurnError(
        code="too_many_replies",
        message=f"You already have {refusal.running} replies being written (at most "
        f"{refusal.limit} at once). Wait for one to finish, then send again; nothing was sent.",
        status=429,
        details={"open_replies": refusal.running, "limit": refusal.limit},
    )
