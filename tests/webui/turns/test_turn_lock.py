"""One turn at a time per conversation, one answer per message: concurrent sends and retries over
real HTTP, a lock a killed process left behind, the database's own refusal of a second answer,
and stopping a running turn from another request."""

import importlib
import json
import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
import requests
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.support.failed_turns import failed_turn
from tests.support.fakes import GatedAdapter, ScriptedStreamAdapter
from tests.support.live_sessions import WAIT, logged_in
from webui.models import Conversation, Message
from webui.turns import lock
from webui.turns.events import TurnFailed
from webui.turns.service import TurnError, run_turn, stream_turn
from webui.vessels import registry

pytestmark = pytest.mark.django_db(transaction=True)

#: The host's last migration before the reply link was renamed from ``answers`` to ``reply_to``.
BEFORE_REPLY_TO = "0016_process_heartbeats"


def post_all(
    base_url: str,
    username: str,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    open_gate_after: int | None = None,
) -> list[requests.Response]:
    """Send ``calls`` (path, JSON body) at once, one thread and session each; their answers.
    With ``open_gate_after``, :class:`GatedAdapter`'s gate opens once that many have answered."""
    sessions = [logged_in(base_url, username) for _ in calls]
    ready = threading.Barrier(len(calls), timeout=WAIT)
    answers: list[Any] = [None] * len(calls)
    counted = threading.Lock()

    def send(index: int) -> None:
        path, body = calls[index]
        ready.wait()
        answers[index] = sessions[index].post(f"{base_url}{path}", json=body, timeout=WAIT)
        with counted:
            if sum(a is not None for a in answers) == open_gate_after:
                GatedAdapter.gate.set()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    return answers


class Background:
    """One request sent from a thread, its answer kept for later."""

    def __init__(
        self,
        session: requests.Session,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        self.response: requests.Response | None = None
        self.headers = headers or {}
        self.thread = threading.Thread(target=self.send, args=(session, url, body))
        self.thread.start()

    def send(self, session: requests.Session, url: str, body: dict[str, Any]) -> None:
        self.response = session.post(url, json=body, headers=self.headers, timeout=WAIT)

    def result(self) -> requests.Response:
        self.thread.join(WAIT)
        assert self.response is not None, "the request never answered"
        return self.response


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> type[GatedAdapter]:
    GatedAdapter.reset()
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", GatedAdapter)
    return GatedAdapter


def test_messages_and_retries_sent_while_a_turn_runs_are_409s_that_save_nothing(
    live_server: Any, conversation: Conversation, user: Any, gated: Any, saved_replies: list[Any]
) -> None:
    base = f"/api/conversations/{conversation.id}"
    first = Background(
        logged_in(live_server.url, user.username),
        f"{live_server.url}{base}/messages/",
        {"text": "a"},
    )
    assert gated.entered.wait(WAIT)
    running = str(Conversation.objects.get(pk=conversation.pk).running_turn_id)

    answers = post_all(
        live_server.url,
        user.username,
        [(f"{base}/messages/", {"text": f"second {i}"}) for i in range(4)]
        + [(f"{base}/retry/", {})],
    )

    for answer in answers:
        assert answer.status_code == 409
        error = answer.json()["error"]
        assert error["code"] == "turn_in_progress"
        assert error["details"] == {"turn_id": running}
        assert "still being written" in error["message"]
    assert list(conversation.messages.values_list("content", flat=True)) == ["a"]
    gated.gate.set()
    assert first.result().status_code == 201
    assert [m.reply_to.content for m in saved_replies] == ["a"]
    assert Conversation.objects.get(pk=conversation.pk).running_turn_id is None


def test_five_concurrent_retries_of_one_message_save_one_answer(
    live_server: Any, conversation: Conversation, user: Any, gated: Any, saved_replies: list[Any]
) -> None:
    waiting = Message.objects.create(conversation=conversation, role="user", content="hello?")

    # The turn that got the lock waits in the vessel until the four others have their answers.
    answers = post_all(
        live_server.url,
        user.username,
        [(f"/api/conversations/{conversation.id}/retry/", {}) for _ in range(5)],
        open_gate_after=4,
    )

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201, 409, 409, 409, 409]
    codes = {a.json()["error"]["code"] for a in answers if a.status_code == 409}
    assert codes == {"turn_in_progress"}
    assert [reply.reply_to_id for reply in saved_replies] == [waiting.pk]
    assert conversation.messages.filter(role="assistant").count() == 1


def test_the_database_refuses_a_second_answer_to_one_message(conversation: Conversation) -> None:
    question = Message.objects.create(conversation=conversation, role="user", content="tea?")
    Message.objects.create(conversation=conversation, role="assistant", reply_to=question)

    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, role="assistant", reply_to=question)
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, role="user", reply_to=question)
    assert conversation.messages.count() == 2


def test_a_lock_left_by_a_killed_process_is_claimed_once_its_lease_ran_out(
    conversation: Conversation,
) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(
        running_turn_id=uuid.uuid4(), turn_lease_until=timezone.now() - timedelta(seconds=1)
    )

    result = run_turn(conversation=conversation, text="anyone there?")

    assert result.assistant_message.reply_to == result.user_message
    left = Conversation.objects.get(pk=conversation.pk)
    assert (left.running_turn_id, left.turn_lease_until) == (None, None)


def test_a_lock_whose_lease_holds_refuses_the_turn_and_nothing_is_saved(
    conversation: Conversation,
) -> None:
    running = uuid.uuid4()
    Conversation.objects.filter(pk=conversation.pk).update(
        running_turn_id=running, turn_lease_until=timezone.now() + timedelta(minutes=1)
    )

    with pytest.raises(TurnError) as caught:
        run_turn(conversation=conversation, text="anyone there?")

    assert (caught.value.code, caught.value.status) == ("turn_in_progress", 409)
    assert caught.value.details == {"turn_id": str(running)}
    assert caught.value.user_message is None
    assert not conversation.messages.exists()
    conversation.refresh_from_db()
    assert conversation.title == ""


def test_a_failed_turn_releases_the_lock(conversation: Conversation) -> None:
    failed_turn(conversation, "are you there?")

    assert Conversation.objects.get(pk=conversation.pk).running_turn_id is None
    assert run_turn(conversation=conversation, text="and now?").assistant_message.content


def test_the_stop_route_stops_the_running_turn_which_saves_its_partial_text(
    live_server: Any,
    conversation: Conversation,
    user: Any,
    monkeypatch: pytest.MonkeyPatch,
    saved_replies: list[Any],
) -> None:
    entered, gate = threading.Event(), threading.Event()

    def hold_after_the_first_piece(index: int) -> None:
        if index == 1:
            entered.set()
            assert gate.wait(WAIT)

    monkeypatch.setattr(lock, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(ScriptedStreamAdapter, "between", staticmethod(hold_after_the_first_piece))
    monkeypatch.setattr(ScriptedStreamAdapter, "closed_early", False)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)
    session = logged_in(live_server.url, user.username)
    base = f"{live_server.url}/api/conversations/{conversation.id}"
    # The page's way: the reply streamed as server-sent events, so a stop ends the vessel call.
    turn = Background(
        session,
        f"{base}/messages/",
        {"text": "tell me a story"},
        headers={"Accept": "text/event-stream"},
    )
    assert entered.wait(WAIT)
    running = str(Conversation.objects.get(pk=conversation.pk).running_turn_id)

    stopping = session.post(f"{base}/stop/", json={"turn_id": running}, timeout=WAIT)
    gate.set()
    answer = turn.result()

    assert (stopping.status_code, stopping.json()) == (202, {"turn_id": running})
    assert answer.status_code == 200
    last_event, data = answer.text.strip().split("\n\n")[-1].split("\n")
    assert last_event == "event: done"
    reply = json.loads(data.removeprefix("data: "))["assistant"]
    assert (reply["content"], reply["stopped"]) == ("Once upon ", True)
    assert ScriptedStreamAdapter.closed_early
    assert [m.stopped for m in saved_replies] == [True]
    again = session.post(f"{base}/stop/", json={"turn_id": running}, timeout=WAIT)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "no_turn_running"


def test_existing_replies_are_linked_to_the_message_each_answers(
    make_conversation: Any,
) -> None:
    migration = importlib.import_module("webui.migrations.0008_turn_lock_answers_and_saved_rounds")
    first, second = make_conversation(), make_conversation()
    old = migrate_webui(BEFORE_REPLY_TO)  # the link was still named ``answers`` then
    OldMessage = old.get_model("webui", "Message")
    sequences = iter(range(1, 100))

    def row(conversation: Conversation, role: str) -> Any:
        return OldMessage.objects.create(
            conversation_id=conversation.pk, role=role, content=role, sequence=next(sequences)
        )

    orphan = row(second, "assistant")  # an admin's row with no question before it
    question = row(first, "user")
    reply, duplicate = row(first, "assistant"), row(first, "assistant")
    later = row(first, "user")
    later_reply = row(first, "assistant")
    unanswered = row(second, "user")

    migration.name_the_answered_messages(old, None)
    migrate_webui(latest_webui())  # renaming the link to ``reply_to`` keeps every link

    linked = dict(Message.objects.values_list("pk", "reply_to_id"))
    assert linked[reply.pk] == question.pk
    assert linked[later_reply.pk] == later.pk
    assert linked[duplicate.pk] is None  # a second answer from before the lock stays unlinked
    assert linked[orphan.pk] is None
    assert not Message.objects.filter(reply_to_id=unanswered.pk).exists()


def migrate_webui(name: str) -> Any:
    """Migrate the host's tables to migration ``name``; the models as they were then."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("webui", name)])
    return executor.loader.project_state([("webui", name)]).apps


def latest_webui() -> str:
    graph = MigrationExecutor(connection).loader.graph
    return next(name for app, name in graph.leaf_nodes() if app == "webui")


def test_a_turn_whose_lock_was_taken_after_its_lease_ran_out_fails_and_saves_no_answer(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, saved_replies: list[Any]
) -> None:
    rivals: list[lock.TurnLock] = []

    def lease_runs_out_and_another_turn_claims(index: int) -> None:
        if index == 1:
            Conversation.objects.filter(pk=conversation.pk).update(
                turn_lease_until=timezone.now() - timedelta(seconds=1)
            )
            rivals.append(lock.claim_turn(conversation))

    monkeypatch.setattr(lock, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(
        ScriptedStreamAdapter, "between", staticmethod(lease_runs_out_and_another_turn_claims)
    )
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)

    events = list(stream_turn(conversation=conversation, text="tell me a story", streamed=True))

    assert isinstance(events[-1], TurnFailed)
    error = events[-1].error
    assert (error.code, error.status) == ("turn_lost", 409)
    assert error.user_message == conversation.messages.get(role="user")
    assert saved_replies == []
    held = Conversation.objects.get(pk=conversation.pk)
    assert str(held.running_turn_id) == rivals[0].turn_id  # the rival's lock is left alone
