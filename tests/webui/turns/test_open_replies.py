"""A member has at most ``WEBUI_MAX_OPEN_REPLIES`` replies being written at once: past it a new
one, streamed or not, is refused with 429 in the API's error shape with ``Retry-After`` and
nothing saved; the count is the conversations' live turn leases, so a turn whose process died
stops counting once its lease lapses, and another member's replies never count."""

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
import requests
from django.utils import timezone

from tests.support.fakes import GatedAdapter
from tests.support.live_sessions import WAIT, logged_in
from webui.models import Conversation, Message
from webui.vessels import registry

pytestmark = pytest.mark.django_db(transaction=True)

STREAM = {"Accept": "text/event-stream"}


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> type[GatedAdapter]:
    """The offline vessel holding every call until the test opens its gate."""
    GatedAdapter.reset()
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", GatedAdapter)
    return GatedAdapter


@pytest.fixture
def session(live_server: Any, user: Any) -> requests.Session:
    """The member, logged in to the live server."""
    return logged_in(live_server.url, user.username)


def running_turns(member: Any) -> int:
    return Conversation.objects.filter(viewer=member, running_turn_id__isnull=False).count()


def assert_refused(response: requests.Response, *, open_replies: int) -> None:
    assert response.status_code == 429, response.text[:300]
    assert response.headers["Content-Type"].startswith("application/json")
    assert int(response.headers["Retry-After"]) > 0
    error = response.json()["error"]
    assert error["code"] == "too_many_replies"
    assert error["details"] == {"open_replies": open_replies, "limit": 4}
    assert "Wait for one to finish" in error["message"]


@pytest.mark.usefixtures("gated")
def test_a_fifth_reply_is_refused_while_four_are_being_written_and_accepted_after(
    live_server: Any, user: Any, session: requests.Session, make_conversation: Any
) -> None:
    busy = [make_conversation() for _ in range(4)]
    spare = make_conversation()

    def stream(conversation: Conversation) -> None:
        url = f"{live_server.url}/api/conversations/{conversation.pk}/messages/"
        session.post(url, json={"text": "hello"}, headers=STREAM, timeout=WAIT).close()

    writers = [threading.Thread(target=stream, args=(c,)) for c in busy]
    for writer in writers:
        writer.start()
    deadline = time.monotonic() + WAIT
    while running_turns(user) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    base = f"{live_server.url}/api/conversations/{spare.pk}"
    try:
        streamed = session.post(
            f"{base}/messages/", json={"text": "fifth"}, headers=STREAM, timeout=WAIT
        )
        plain = session.post(f"{base}/messages/", json={"text": "fifth"}, timeout=WAIT)
        retried = session.post(f"{base}/retry/", json={}, timeout=WAIT)
    finally:
        GatedAdapter.gate.set()
        for writer in writers:
            writer.join(timeout=WAIT)

    for refused in (streamed, plain, retried):
        assert_refused(refused, open_replies=4)
    assert not spare.messages.exists()
    assert Message.objects.filter(role="assistant").count() == 4
    accepted = session.post(f"{base}/messages/", json={"text": "fifth"}, timeout=WAIT)
    assert accepted.status_code == 201, accepted.text[:300]


def test_turns_of_a_dead_process_stop_counting_once_their_leases_lapse(
    live_server: Any, session: requests.Session, make_user: Any, make_conversation: Any
) -> None:
    # What a killed process leaves: turns still named on their rows, their leases running out.
    left = [make_conversation() for _ in range(4)]
    for conversation in left:
        Conversation.objects.filter(pk=conversation.pk).update(
            running_turn_id=uuid.uuid4(), turn_lease_until=timezone.now() + timedelta(minutes=1)
        )
    # Another member's four replies being written are theirs, not this member's.
    other = make_user("bob")
    for _ in range(4):
        Conversation.objects.filter(pk=make_conversation(viewer=other).pk).update(
            running_turn_id=uuid.uuid4(), turn_lease_until=timezone.now() + timedelta(minutes=1)
        )
    spare = make_conversation()
    url = f"{live_server.url}/api/conversations/{spare.pk}/messages/"

    assert_refused(session.post(url, json={"text": "now"}, timeout=WAIT), open_replies=4)
    Conversation.objects.filter(pk__in=[c.pk for c in left]).update(
        turn_lease_until=timezone.now() - timedelta(seconds=1)
    )
    accepted = session.post(url, json={"text": "now"}, timeout=WAIT)

    assert accepted.status_code == 201, accepted.text[:300]
    assert accepted.json()["assistant"]["content"]


@pytest.mark.usefixtures("gated")
def test_twenty_simultaneous_sends_never_have_more_than_the_cap_being_written(
    live_server: Any, user: Any, session: requests.Session, make_conversation: Any
) -> None:
    conversations = [make_conversation() for _ in range(20)]
    start = threading.Barrier(len(conversations))
    answers: dict[int, int] = {}
    most_running = 0

    def send(index: int, conversation: Conversation) -> None:
        own = requests.Session()
        own.cookies.update(session.cookies)
        own.headers.update(session.headers)
        url = f"{live_server.url}/api/conversations/{conversation.pk}/messages/"
        start.wait(timeout=WAIT)
        answers[index] = own.post(url, json={"text": "all at once"}, timeout=WAIT).status_code

    senders = [threading.Thread(target=send, args=(i, c)) for i, c in enumerate(conversations)]
    for sender in senders:
        sender.start()
    try:
        # Every send is either refused or holding its turn at the gate: count until they all are.
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            running = running_turns(user)
            most_running = max(most_running, running)
            refused = sum(1 for status in answers.values() if status == 429)
            if running + refused >= len(conversations) or len(answers) == len(conversations):
                break
            time.sleep(0.02)
    finally:
        GatedAdapter.gate.set()
        for sender in senders:
            sender.join(timeout=WAIT)

    assert most_running <= 4, f"{most_running} replies were being written at once (cap 4)"
    assert sorted(answers.values()) == [201] * 4 + [429] * 16, answers
    assert Message.objects.filter(role="assistant").count() == 4
    assert Message.objects.filter(role="user").count() == 4, "a refused send saved its message"
