"""One of everything the host's routes and admin pages point at, for the host's access walk
(``tests/webui/web/test_access_walk.py``) and the admin's "View on site" links
(``tests/webui/admin/test_admin_history.py``). It never imports the plug-in."""

from dataclasses import dataclass
from typing import Any

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth.models import Group
from django.utils import timezone

from tests.support.access_walk import make_role_users
from webui.models import (
    Conversation,
    DailyChore,
    Message,
    ScheduledJob,
    Soul,
    UnattendedRun,
    VaultSnapshot,
    Vessel,
    VesselCall,
    VesselMove,
)


@dataclass
class HostWorld:
    """One of everything the host's routes and admin pages point at."""

    soul: Soul
    vessel: Vessel
    message: Message
    # An account for each role, and each account's own chat with the soul on the vessel.
    users: dict[str, Any]
    conversations: dict[str, Conversation]
    # What the soul's unattended runs and the household's chores leave.
    job: ScheduledJob
    run: UnattendedRun
    snapshot: VaultSnapshot
    chore: DailyChore
    # The admin's own records: a group, and django-axes' records of logins.
    group: Group
    login_attempt: AccessAttempt
    login_log: AccessLog
    login_failure: AccessFailureLog
    # The cache ledger's row and a member's move of a chat to another model.
    vessel_call: VesselCall
    vessel_move: VesselMove

    def conversation(self, role: str) -> Conversation:
        """The role's own conversation (anonymous is handed the member's)."""
        return self.conversations["member" if role == "anonymous" else role]


LOGIN_RECORD = {
    "username": "member",
    "ip_address": "127.0.0.1",
    "user_agent": "test",
    "http_accept": "*/*",
    "path_info": "/accounts/login/",
}


def host_world(
    make_user: Any, make_conversation: Any, soul: Soul, offline_vessel: Vessel
) -> HostWorld:
    """The host's world, built with the suite's factory fixtures, an account for each role."""
    users = make_role_users(make_user)
    conversations = {
        role: make_conversation(viewer=user) for role, user in users.items() if user is not None
    }
    ledgered = make_conversation(viewer=users["member"])
    return HostWorld(
        users=users,
        soul=soul,
        vessel=offline_vessel,
        conversations=conversations,
        message=Message.objects.create(
            conversation=make_conversation(viewer=users["member"]), role="user", content="hello"
        ),
        job=ScheduledJob.objects.create(
            name="Morning", soul=soul, vessel=offline_vessel, schedule="every 1d"
        ),
        run=UnattendedRun.objects.create(kind="wake", soul=soul),
        snapshot=VaultSnapshot.objects.create(soul=soul, sha256="a" * 64, text="I am Pippa."),
        group=Group.objects.create(name="household"),
        chore=DailyChore.objects.create(name="prune", last_day=timezone.localdate()),
        login_attempt=AccessAttempt.objects.create(
            **LOGIN_RECORD, get_data="", post_data="", failures_since_start=1
        ),
        login_log=AccessLog.objects.create(**LOGIN_RECORD),
        login_failure=AccessFailureLog.objects.create(**LOGIN_RECORD),
        vessel_call=VesselCall.objects.create(
            conversation=ledgered,
            user_message=Message.objects.create(conversation=ledgered, role="user", content="hi"),
            round=0,
            vessel=offline_vessel,
            adapter="offline",
            model="offline-1",
            input_tokens=1200,
            prefix_bytes=4800,
        ),
        vessel_move=VesselMove.objects.create(
            conversation=ledgered,
            from_vessel=offline_vessel,
            to_vessel=offline_vessel,
            moved_by=users["member"],
        ),
    )
