"""A turn holds its conversation by a short lease that a heartbeat renews on the database's clock:
a lapsed lease frees the conversation and keeps the dead turn's partial reply, marked interrupted;
Stop says when nothing was running; a locked SQLite does not throw a written reply away; a
conversation deleted mid-turn is reported as deleted; the admin does not delete under a live turn.
"""

import sqlite3
import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.backends.signals import connection_created
from django.db.models.functions import Now
from django.utils import timezone

from tests.support.fakes import GatedAdapter, ScriptedStreamAdapter
from webui.models import Conversation, Message
from webui.turns import lock
from webui.turns.events import TurnDone, TurnFailed
from webui.turns.service import retry_turn, run_turn, stream_turn
from webui.vessels import registry
from webui.vessels.offline import OfflineAdapter

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 30  # seconds a thread may take before the test gives up on it (a hang, not a timing check)


def dead_turn(conversation: Conversation, *, partial: str, lapsed: bool = True) -> Message:
    """A turn that a killed process left: its user message saved, its heartbeat's text on the row,
    its lease lapsed (or, ``lapsed=False``, still live)."""
    question = Message.objects.create(conversation=conversation, role="user", content="a story?")
    offset = timedelta(seconds=-1 if lapsed else 60)
    Conversation.objects.filter(pk=conversation.pk).update(
        running_turn_id=uuid.uuid4(),
        turn_lease_until=timezone.now() + offset,
        turn_message_id=question.pk,
        turn_partial_text=partial,
    )
    return question


def test_a_send_after_a_lapsed_turn_keeps_its_partial_reply_marked_interrupted(
    conversation: Conversation,
) -> None:
    question = dead_turn(conversation, partial="Once upon a ")

    result = run_turn(conversation=conversation, text="are you there?")

    kept = Message.objects.get(reply_to=question)
    assert (kept.content, kept.interrupted, kept.stopped) == ("Once upon a ", True, False)
    assert kept.sequence < result.user_message.sequence
    assert not result.assistant_message.interrupted
    left = Conversation.objects.get(pk=conversation.pk)
    assert (left.running_turn_id, left.turn_partial_text, left.turn_message_id) == (None, "", None)


def test_a_retry_after_a_lapsed_turn_answers_its_message_in_full(
    conversation: Conversation,
) -> None:
    question = dead_turn(conversation, partial="Once upon a ")

    result = retry_turn(conversation=conversation)

    assert result.user_message == question
    assert not result.assistant_message.interrupted
    assert Message.objects.filter(reply_to=question).count() == 1


def test_stop_on_a_lapsed_turn_frees_the_conversation_and_says_nothing_was_running(
    auth_client: Any, conversation: Conversation
) -> None:
    question = dead_turn(conversation, partial="Once upon a ")
    turn_id = str(Conversation.objects.get(pk=conversation.pk).running_turn_id)

    answer = auth_client.post(
        f"/api/conversations/{conversation.pk}/stop/", {"turn_id": turn_id}, format="json"
    )

    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["code"] == "turn_not_running"
    assert "Nothing was writing this reply" in error["message"]
    assert Conversation.objects.get(pk=conversation.pk).running_turn_id is None
    kept = Message.objects.get(reply_to=question)
    assert (kept.content, kept.interrupted) == ("Once upon a ", True)
    listed = auth_client.get(f"/api/conversations/{conversation.pk}/messages/").json()
    assert [m["interrupted"] for m in listed] == [False, True]


def test_stop_on_a_live_turn_answers_202_and_only_raises_its_flag(
    auth_client: Any, conversation: Conversation
) -> None:
    question = dead_turn(conversation, partial="Once ", lapsed=False)
    turn_id = str(Conversation.objects.get(pk=conversation.pk).running_turn_id)

    answer = auth_client.post(
        f"/api/conversations/{conversation.pk}/stop/", {"turn_id": turn_id}, format="json"
    )

    assert answer.status_code == 202
    held = Conversation.objects.get(pk=conversation.pk)
    assert (str(held.running_turn_id), held.turn_stop_requested) == (turn_id, True)
    assert not Message.objects.filter(reply_to=question).exists()


def test_a_vessel_call_blocked_past_the_lease_keeps_it_by_the_heartbeat(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.WEBUI = {"TURN_LEASE_SECONDS": 0.9}  # a beat every 0.3 s
    GatedAdapter.reset()
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", GatedAdapter)
    turn = threading.Thread(target=run_turn, kwargs={"conversation": conversation, "text": "hi"})
    turn.start()
    assert GatedAdapter.entered.wait(WAIT)
    time.sleep(2.5)  # the call blocks for almost three leases, with no piece arriving

    with pytest.raises(lock.TurnBusy):
        lock.claim_turn(conversation)
    ahead = (
        Conversation.objects.filter(pk=conversation.pk)
        .values_list("turn_lease_until", flat=True)
        .first()
    )
    database_now = Conversation.objects.annotate(now=Now()).values_list("now", flat=True).first()
    GatedAdapter.gate.set()
    turn.join(WAIT)

    assert ahead - database_now <= timedelta(seconds=1)  # a short lease, renewed all along
    assert conversation.messages.filter(role="assistant").count() == 1


class RivalClaimsDuringTheCall(OfflineAdapter):
    """The offline vessel, during whose call the turn's lease lapses and another turn claims the
    conversation (a server too slow to renew, say)."""

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        conversation = Conversation.objects.get(vessel=self.vessel)
        Conversation.objects.filter(pk=conversation.pk).update(
            turn_lease_until=timezone.now() - timedelta(seconds=1)
        )
        lock.claim_turn(conversation)
        return super().send(request)


def test_a_turn_that_lost_its_lock_runs_no_tool(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, recording_tool: Any
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", RivalClaimsDuringTheCall)

    events = list(stream_turn(conversation=conversation, text="remember I like tea"))

    assert isinstance(events[-1], TurnFailed)
    assert events[-1].error.code == "turn_lost"
    assert recording_tool.calls == []  # the tool (a remember, an ask) never ran


def test_a_conversation_deleted_mid_turn_reports_that_it_was_deleted(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, saved_replies: list[Any]
) -> None:
    def delete_it(index: int) -> None:
        if index == 1:
            Conversation.objects.filter(pk=conversation.pk).delete()

    monkeypatch.setattr(lock, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(ScriptedStreamAdapter, "between", staticmethod(delete_it))
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)

    events = list(stream_turn(conversation=conversation, text="tell me a story", streamed=True))

    assert isinstance(events[-1], TurnFailed)
    error = events[-1].error
    assert (error.code, error.status) == ("conversation_deleted", 410)
    assert "deleted" in error.message
    assert error.user_message is None  # gone with its conversation: nothing to retry
    assert saved_replies == []


@pytest.fixture
def quick_to_give_up_on_locks() -> Any:
    """Every connection (this thread's and those the turn's threads open) gives up on a locked
    SQLite after a tenth of a second, where the site's own timeout would wait ten."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's own lock")

    def short_timeout(sender: Any, connection: Any, **kwargs: Any) -> None:
        connection.cursor().execute("PRAGMA busy_timeout=100")

    connection_created.connect(short_timeout)
    connection.ensure_connection()
    connection.cursor().execute("PRAGMA busy_timeout=100")
    yield
    connection_created.disconnect(short_timeout)
    connection.close()


def hold_the_write_lock(seconds: float, holding: threading.Event) -> threading.Thread:
    """Another connection holds SQLite's write lock for ``seconds``, as a busy writer would."""

    def hold() -> None:
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        holding.set()
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    return holder


def test_a_locked_sqlite_during_renewal_keeps_the_reply(
    conversation: Conversation,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    quick_to_give_up_on_locks: Any,
) -> None:
    settings.WEBUI = {"TURN_LEASE_SECONDS": 1.5}  # a beat every half second
    holders: list[threading.Thread] = []

    def lock_the_database(index: int) -> None:
        if index == 1:
            holding = threading.Event()
            holders.append(hold_the_write_lock(3.0, holding))
            assert holding.wait(WAIT)
        time.sleep(0.6)  # the reply goes on arriving while the database is locked

    monkeypatch.setattr(lock, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(ScriptedStreamAdapter, "between", staticmethod(lock_the_database))
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)

    events = list(stream_turn(conversation=conversation, text="tell me a story", streamed=True))
    holders[0].join(WAIT)

    assert isinstance(events[-1], TurnDone), events[-1]
    reply = events[-1].result.assistant_message
    assert reply.content == "Once upon a time there was tea."
    assert Message.objects.get(pk=reply.pk).reply_to_id == events[-1].result.user_message.pk


def test_a_reply_the_locked_database_never_lets_be_saved_is_told_and_its_text_kept(
    conversation: Conversation,
    monkeypatch: pytest.MonkeyPatch,
    quick_to_give_up_on_locks: Any,
) -> None:
    conversation.vessel.deadline = 1.0  # the turn's budget for trying again
    conversation.vessel.save()
    holders: list[threading.Thread] = []

    def lock_the_database_for_good(index: int) -> None:
        if index == len(ScriptedStreamAdapter.pieces) - 1:
            holding = threading.Event()
            holders.append(hold_the_write_lock(4.0, holding))
            assert holding.wait(WAIT)

    monkeypatch.setattr(ScriptedStreamAdapter, "between", staticmethod(lock_the_database_for_good))
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)

    events = list(stream_turn(conversation=conversation, text="tell me a story", streamed=True))
    holders[0].join(WAIT)

    assert isinstance(events[-1], TurnFailed), events[-1]
    error = events[-1].error
    assert (error.code, error.status) == ("reply_not_saved", 503)
    assert "could not be saved" in error.message
    assert error.details["reply_text"] == "Once upon a time there was tea."
    assert error.user_message == conversation.messages.get(role="user")
    assert not conversation.messages.filter(role="assistant").exists()


def test_the_admin_refuses_to_delete_a_conversation_a_live_turn_writes_in(
    client: Any, make_user: Any, conversation: Conversation
) -> None:
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    # A first turn that has just claimed the conversation (the admin deletes no conversation
    # with messages: they are read-only records).
    Conversation.objects.filter(pk=conversation.pk).update(
        running_turn_id=uuid.uuid4(), turn_lease_until=timezone.now() + timedelta(seconds=60)
    )
    url = f"/admin/webui/conversation/{conversation.pk}/delete/"

    refused = client.post(url, {"post": "yes"}, follow=True)

    assert Conversation.objects.filter(pk=conversation.pk).exists()
    assert "A reply is being written in this conversation now" in refused.content.decode()
    Conversation.objects.filter(pk=conversation.pk).update(
        turn_lease_until=timezone.now() - timedelta(seconds=1)
    )
    deleted = client.post(url, {"post": "yes"})
    assert deleted.status_code == 302
    assert not Conversation.objects.filter(pk=conversation.pk).exists()


def test_the_page_shows_what_arrived_before_the_server_died_and_not_while_a_reply_is_live(
    client: Any, user: Any, conversation: Conversation
) -> None:
    client.force_login(user)
    dead_turn(conversation, partial="Once upon a <b>", lapsed=False)
    url = f"/conversations/{conversation.pk}/"

    live = client.get(url).context["what_arrived"]
    Conversation.objects.filter(pk=conversation.pk).update(
        turn_lease_until=timezone.now() - timedelta(seconds=1)
    )
    page = client.get(url)

    assert live == ""
    assert page.context["what_arrived"] == "Once upon a <b>"
    assert '<script id="what-arrived" type="application/json">"Once upon a \\u003Cb\\u003E"' in (
        page.content.decode()
    )
