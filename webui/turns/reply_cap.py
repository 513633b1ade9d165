"""A member's cap on replies being written at once (``WEBUI_MAX_OPEN_REPLIES``).

Each reply holds a web thread while it is written (a stream for its whole length), so one member
with many tabs could take every thread of the site. A reply being written is a conversation of the
member whose turn lease is live (:mod:`webui.turns.lock`), so the count is the database's: it holds
across threads, processes and hosts, and a turn whose process was killed stops counting once its
lease lapses, without anyone cleaning up. The lease is compared with the database's clock.

The cap is taken with the claim, in one transaction (:func:`webui.turns.lock.claim_turn`): the
member's row is locked first (``FOR NO KEY UPDATE`` on PostgreSQL; SQLite's ``IMMEDIATE``
transaction holds the whole database), then the turn claims its conversation with an UPDATE whose
WHERE counts the live leases (:func:`under_reply_cap`), so the count costs no statement of its own;
only a claim that UPDATE refused counts again, to say why (:func:`check_reply_cap`). Two sends at the
same instant therefore count one after the other, and the member never has more than the cap being
written, however many arrive at once. The lock is its own statement on purpose: on PostgreSQL a
statement's snapshot is taken before it waits for a row lock, so a count in the locking statement
would miss the claim it waited for; the UPDATE after it takes a fresh snapshot.
"""

from django.contrib.auth import get_user_model
from django.db.models import Count, IntegerField, Subquery, Value
from django.db.models.functions import Coalesce, Now
from django.db.models.lookups import LessThan

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


def reply_cap_applies(member_id: int | None) -> bool:
    """Whether a reply for ``member_id`` is capped: not with no member (an unattended run) nor
    with ``WEBUI_MAX_OPEN_REPLIES`` at 0."""
    return member_id is not None and webui_settings.MAX_OPEN_REPLIES > 0


def lock_member(member_id: int) -> None:
    """Lock ``member_id``'s row for the rest of the transaction, so that this claim's count and
    claim are one step for every other claim of that member (one statement; on SQLite, whose
    ``IMMEDIATE`` transaction already holds the whole database, a plain read)."""
    members = get_user_model().objects.filter(pk=member_id)
    list(members.select_for_update(no_key=True).values_list("pk", flat=True))


def under_reply_cap(member_id: int) -> LessThan:
    """A condition for an UPDATE's WHERE: ``member_id`` has fewer than ``WEBUI_MAX_OPEN_REPLIES``
    replies being written, counted by the database as the UPDATE runs."""
    running = (
        Conversation.objects.filter(
            viewer_id=member_id,
            running_turn_id__isnull=False,
            turn_lease_until__gt=Now(),
        )
        .order_by()
        .values("viewer_id")
        .annotate(running=Count("pk"))
        .values("running")
    )
    return LessThan(
        Coalesce(Subquery(running, output_field=IntegerField()), Value(0)),
        Value(webui_settings.MAX_OPEN_REPLIES),
    )


def check_reply_cap(member_id: int) -> None:
    """:class:`TooManyReplies` when ``member_id`` already has ``WEBUI_MAX_OPEN_REPLIES`` replies
    being written. Called with the member's row locked (:func:`lock_member`), after a claim that
    :func:`under_reply_cap` refused, to tell the cap from a busy conversation."""
    cap = webui_settings.MAX_OPEN_REPLIES
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
