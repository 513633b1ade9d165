"""The history a prompt replays is read once per process and then only the rows added since, and
it is the same bytes as a fresh read from model instances, for every adapter, over a long
conversation with tool rounds. A deleted conversation's history leaves the cache: at once in the
process that deleted it, and in every other once idle."""

import threading
from typing import Any

import pytest

from tests.support.conversations import long_conversation
from webui.models import Conversation, Message
from webui.prompt import history
from webui.prompt_types import HistoryMessage, Prompt
from webui.text.canonical import canonical_bytes
from webui.turns.service import run_turn
from webui.vessels.registry import ADAPTERS
from webui.web.conversations import delete_conversation

pytestmark = pytest.mark.django_db


def from_instances(conversation: Conversation, before: Message) -> tuple[HistoryMessage, ...]:
    """The history as it was built before it was kept: a model instance per row."""
    rows = Message.objects.filter(conversation=conversation, sequence__lt=before.sequence)
    return tuple(
        history.history_message(
            id=m.id, role=m.role, content=m.content, tool_uses=m.tool_uses, rounds=m.rounds
        )
        for m in rows.order_by("sequence")
    )


def request_bytes(conversation: Conversation, messages: tuple[HistoryMessage, ...]) -> list[bytes]:
    """What every adapter would send with this history (the rest of the prompt held fixed)."""
    prompt = Prompt(
        conversation_id=str(conversation.id),
        system_sections=("vault",),
        history=messages,
        user_text="next",
        turn_slot=("slot",),
        user_message_id="u",
    )
    return [
        canonical_bytes(adapter(conversation.vessel).build_request(prompt=prompt, tools=()))
        for adapter in ADAPTERS
    ]


def test_kept_history_is_the_same_bytes_as_a_fresh_read_over_a_long_conversation(
    conversation: Conversation, recording_tool: Any
) -> None:
    users = long_conversation(conversation)
    assert Message.objects.filter(conversation=conversation).exclude(rounds=[]).count() == 40

    history.drop_cached_history(conversation.id)
    for user_message in users:  # turn by turn, as one process answers them
        kept = history.conversation_history(conversation, before=user_message)
        fresh = from_instances(conversation, user_message)
        assert kept == fresh
        assert request_bytes(conversation, kept) == request_bytes(conversation, fresh)

    # A retry of an earlier message, answered by a process that kept the whole conversation.
    earlier = users[40]
    assert history.conversation_history(conversation, before=earlier) == from_instances(
        conversation, earlier
    )


def test_a_later_turn_reads_only_the_rows_added_since(
    conversation: Conversation, recording_tool: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for index in range(30):
        run_turn(conversation=conversation, text=f"turn {index}")
    newest = Message.objects.create(conversation=conversation, role="user", content="now")

    with CaptureQueriesContext(connection) as queries:
        kept = history.conversation_history(conversation, before=newest)

    # The last turn read up to its own user message (59); only 59 and its answer are new. The
    # other query is the shared cache's deletions version (no delete since: nothing more).
    deletions, query = queries.captured_queries
    assert "webui_cache" in deletions["sql"]
    assert '"sequence" > 58 AND' in query["sql"]
    assert '"sequence" < 61)' in query["sql"]
    assert len(kept) == 60


def cached_texts() -> str:
    """Every text the history cache of this process holds, joined."""
    cached = history.HISTORY_CACHE.values()
    return "\n".join(message.text for entry in cached for message in entry.messages)


def test_a_deleted_conversation_leaves_the_history_cache_of_the_process_that_deleted_it(
    conversation: Conversation, recording_tool: Any, make_conversation: Any
) -> None:
    other = make_conversation()
    for index in range(3):
        run_turn(conversation=conversation, text=f"the secret plan {index}")
        run_turn(conversation=other, text=f"the garden {index}")
    assert "the secret plan 1" in cached_texts()

    delete_conversation(conversation=conversation)

    assert "the secret plan" not in cached_texts()
    assert "the garden 1" in cached_texts()  # only the deleted conversation's history went


def test_a_conversation_deleted_through_the_admin_leaves_the_history_cache(
    conversation: Conversation, recording_tool: Any, make_conversation: Any, rf: Any
) -> None:
    from django.contrib import admin

    chosen = make_conversation()
    for talk in (conversation, chosen):
        run_turn(conversation=talk, text=f"the first words of {talk.pk}")
        run_turn(conversation=talk, text="the secret plan")
    conversation_admin = admin.site._registry[Conversation]

    conversation_admin.delete_model(rf.post("/"), conversation)
    conversation_admin.delete_queryset(rf.post("/"), Conversation.objects.filter(pk=chosen.pk))

    assert not Conversation.objects.filter(pk__in=[conversation.pk, chosen.pk]).exists()
    assert "the first words" not in cached_texts()
    assert "the secret plan" not in cached_texts()


def test_a_conversation_deleted_elsewhere_leaves_this_processs_cache_once_idle(
    conversation: Conversation,
    recording_tool: Any,
    make_conversation: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process's delete is not seen here, so an idle entry is dropped at the cache's
    next use, with no query: the process's own history cache, its idle bound read from
    ``WEBUI_HISTORY_CACHE_IDLE_SECONDS`` when the cache is built, on a clock the test moves."""
    settings.WEBUI = {**settings.WEBUI, "HISTORY_CACHE_IDLE_SECONDS": 700}  # not the default
    now = [1000.0]
    monkeypatch.setattr(history.HISTORY_CACHE, "clock", lambda: now[0])
    other = make_conversation()
    for text in ("the secret plan", "and the rest of it"):  # a later turn keeps the history
        run_turn(conversation=conversation, text=text)
    assert str(conversation.pk) in history.HISTORY_CACHE
    # deleted by another process: this one is not told (no signal here), only the idle bound helps
    Message.objects.filter(conversation=conversation).delete()

    now[0] += 600
    for text in ("hello", "again"):
        run_turn(conversation=other, text=text)
    assert str(conversation.pk) in history.HISTORY_CACHE  # still within the idle bound

    now[0] += 400  # 1000 s since its last use, 400 s since the other's
    assert str(conversation.pk) not in history.HISTORY_CACHE
    assert str(other.pk) in history.HISTORY_CACHE


def test_the_history_cache_is_shared_by_the_process_threads(
    conversation: Conversation, recording_tool: Any
) -> None:
    """A delete in one thread is gone for every thread of the process: one cache, one lock."""
    run_turn(conversation=conversation, text="the secret plan")
    run_turn(conversation=conversation, text="and more")
    seen: list[bool] = []
    thread = threading.Thread(
        target=lambda: seen.append(str(conversation.pk) in history.HISTORY_CACHE)
    )
    thread.start()
    thread.join()
    assert seen == [True]

    delete_conversation(conversation=conversation)

    thread = threading.Thread(
        target=lambda: seen.append(str(conversation.pk) in history.HISTORY_CACHE)
    )
    thread.start()
    thread.join()
    assert seen == [True, False]
