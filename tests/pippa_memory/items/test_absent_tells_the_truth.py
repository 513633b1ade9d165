"""A chat that pinned no memory says why, truly, and is never without memory for life.

A block refused for its size, or an answer refused for any reason other than an engine out of
reach, is recorded with its cause on the pin record; the member's panel and its API say it in a
family's words (never "could not be reached"); the admin filters pin records by it. Such a chat
asks again at a later turn (a block too large: at most once per ``ABSENT_RETRY_SECONDS``), and a
forget or the member's refresh makes it ask at its next turn. When it then pins, the front of its
prompt moves exactly once, recorded like any re-pin.
"""

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from pippa_memory.items import changes
from pippa_memory.models import PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory, grant_manage_memory
from tests.support.memory_turns import started
from webui.models import Conversation
from webui.text.canonical import canonical_json
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

#: One "remember for everyone" within the engine's block budget (6,000 characters) but longer than
#: the plug-in's block limit, which these tests lower to LIMIT: the engine's block holds it, the
#: plug-in refuses the block for its size.
HUGE = "The whole family tree, as Grandma told it: " + "and then " * 400
LIMIT = 2_000
SMALL = "The spare key is under the blue pot."


def history(conversation: Conversation) -> list[tuple[str, str, str]]:
    records = PinRecord.objects.filter(conversation=conversation).order_by("created_at", "id")
    return [(r.outcome, r.reason, r.cause) for r in records]


def head_calls(engine: ReferenceEngine) -> int:
    return sum(1 for r in engine.received if r["path"].endswith("/head"))


def panel(user: Any, conversation: Conversation) -> dict[str, Any]:
    response = api_as(user).get(f"/api/memory/conversations/{conversation.pk}/")
    assert response.status_code == 200, response.content
    return response.json()


def make_the_spacing_pass(conversation: Conversation) -> None:
    """As if ``ABSENT_RETRY_SECONDS`` had passed since the absence and its last try."""
    past = timezone.now() - timedelta(hours=1)
    PinRecord.objects.filter(conversation=conversation).update(created_at=past, tried_again_at=None)


@pytest.fixture
def too_large(
    memory_on: ReferenceEngine, conversation: Conversation, configure: Any
) -> Conversation:
    """A chat whose first turn met a household block too large to bring in."""
    configure(MAX_BLOCK_CHARS=LIMIT)
    assert len(HUGE) > LIMIT
    add_memory(memory_on, SMALL)
    add_memory(memory_on, HUGE)
    return started(conversation)


def test_a_block_too_large_is_recorded_as_such_and_the_panel_says_so_in_family_words(
    too_large: Conversation, user: Any
) -> None:
    assert history(too_large) == [("absent", "block_too_large", "block_too_large")]

    body = panel(user, too_large)

    assert body["state"] == "too_large"
    assert body["summary"].startswith("This chat's memory was too large to bring in")
    assert "could not be reached" not in body["summary"]


@pytest.mark.parametrize(
    ("fault", "options", "reason", "cause", "state"),
    [
        ("wrong_shape", {"body": {"soul": "pippa"}}, "wrong_shape", "unusable_answer", "unusable"),
        ("garbage", {}, "invalid_json", "unusable_answer", "unusable"),
        ("oversized", {}, "too_large", "answer_too_large", "too_large"),
        ("error", {"status": 500}, "http_error", "engine_error", "absent"),
        ("down", {}, "connection_failed", "unreachable", "absent"),
    ],
)
def test_each_refused_answer_is_recorded_with_its_cause_and_said_truly(
    memory_on: ReferenceEngine,
    conversation: Conversation,
    user: Any,
    fault: str,
    options: dict[str, Any],
    reason: str,
    cause: str,
    state: str,
) -> None:
    add_memory(memory_on, SMALL)
    memory_on.set_fault(fault, paths=["/v1/souls/pippa/head"], **options)
    run_turn(conversation=conversation, text="hello")
    memory_on.reset()

    body = panel(user, conversation)

    assert history(conversation) == [("absent", reason, cause)]
    assert body["state"] == state
    reached = "could not be reached" in body["summary"]
    assert reached == (cause == "unreachable"), body["summary"]


def test_a_block_too_large_asks_again_only_once_the_spacing_has_passed(
    sent_requests: list[Any], too_large: Conversation, memory_on: ReferenceEngine
) -> None:
    run_turn(conversation=too_large, text="two")
    assert head_calls(memory_on) == 1  # within the spacing: no call, no record

    make_the_spacing_pass(too_large)
    run_turn(conversation=too_large, text="three")

    assert head_calls(memory_on) == 2
    record = PinRecord.objects.get(conversation=too_large)  # still too large: no new record
    assert record.tried_again_at is not None
    run_turn(conversation=too_large, text="four")
    assert head_calls(memory_on) == 2  # the try was stamped: spaced again
    assert len({canonical_json(r["system"]) for r in sent_requests}) == 1


def test_a_block_that_fits_later_pins_once_with_retried_and_then_holds(
    sent_requests: list[Any], too_large: Conversation, memory_on: ReferenceEngine, configure: Any
) -> None:
    configure(MAX_BLOCK_CHARS=40_000)
    make_the_spacing_pass(too_large)
    run_turn(conversation=too_large, text="two")
    add_memory(memory_on, "Learned after the pin.")
    run_turn(conversation=too_large, text="three")

    too_large.refresh_from_db()
    assert [(o, r) for o, r, _ in history(too_large)] == [
        ("absent", "block_too_large"),
        ("pinned", "retried"),
    ]
    first, second, third = (canonical_json(r["system"]) for r in sent_requests)
    assert "<memory" not in first
    assert SMALL in second
    assert third == second  # the front moved exactly once
    assert "Learned after the pin." not in third


def test_forgetting_the_huge_memory_reaches_a_chat_absent_for_it_at_its_next_turn(
    memory_on: ReferenceEngine,
    conversation: Conversation,
    user: Any,
    make_user: Any,
    configure: Any,
) -> None:
    configure(MAX_BLOCK_CHARS=LIMIT)
    add_memory(memory_on, SMALL)
    huge = add_memory(memory_on, HUGE)
    run_turn(conversation=conversation, text="hello")
    manager = grant_manage_memory(make_user("mum"))

    changed = changes.forget_item(soul=conversation.soul, user=manager, item_id=huge)
    conversation.refresh_from_db()  # as the next request reads it
    run_turn(conversation=conversation, text="again")

    assert changed.repinned.absent == 1
    conversation.refresh_from_db()
    assert conversation.pinned_head is not None
    assert [(o, r) for o, r, _ in history(conversation)] == [
        ("absent", "block_too_large"),
        ("repin_requested", "forgotten"),
        ("pinned", ""),
    ]
    assert panel(user, conversation)["state"] == "pinned"


def test_a_members_refresh_reaches_a_chat_absent_for_a_block_too_large(
    too_large: Conversation, user: Any, configure: Any, sent_requests: list[Any]
) -> None:
    configure(MAX_BLOCK_CHARS=40_000)

    assert panel(user, too_large)["state"] == "too_large"
    refreshed = api_as(user).post(f"/api/memory/conversations/{too_large.pk}/refresh/")
    too_large.refresh_from_db()  # as the next request reads it
    run_turn(conversation=too_large, text="again")

    assert refreshed.status_code == 200, refreshed.content
    too_large.refresh_from_db()
    assert too_large.pinned_head is not None
    assert SMALL in sent_requests[-1]["system"]
    assert ("repin_requested", "member_refresh", "member_refresh") in history(too_large)


def test_a_chat_absent_by_choice_is_not_asked_to_repin_by_a_forget(
    memory_on: ReferenceEngine, make_conversation: Any, make_user: Any
) -> None:
    temporary = make_conversation(temporary=True)
    run_turn(conversation=temporary, text="hello")
    item = add_memory(memory_on, SMALL)
    manager = grant_manage_memory(make_user("mum"))

    changed = changes.forget_item(soul=temporary.soul, user=manager, item_id=item)

    assert changed.repinned.absent == 0
    assert [o for o, _, _ in history(temporary)] == ["absent"]


def test_the_admin_filters_pin_records_by_cause(
    too_large: Conversation, make_conversation: Any, make_user: Any
) -> None:
    run_turn(conversation=make_conversation(temporary=True), text="hi")
    staff = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)

    filtered = client.get("/admin/pippa_memory/pinrecord/?cause__exact=block_too_large")
    page = client.get(f"/admin/pippa_memory/conversationpin/{too_large.pk}/change/")

    assert filtered.status_code == 200
    listed = list(filtered.context["cl"].result_list)
    assert [record.conversation_id for record in listed] == [too_large.pk]
    assert "Absent: the block was too large (block_too_large)" in page.content.decode()


def test_making_the_huge_memory_private_reaches_another_members_chat_absent_for_it(
    memory_on: ReferenceEngine, make_conversation: Any, user: Any, make_user: Any, configure: Any
) -> None:
    configure(MAX_BLOCK_CHARS=LIMIT)
    bob = make_user("bob")
    add_memory(memory_on, SMALL)
    huge = add_memory(memory_on, HUGE, by=user)
    bobs = make_conversation(viewer=bob)
    run_turn(conversation=bobs, text="hello")

    changed = changes.change_scope(soul=bobs.soul, user=user, item_id=huge, scope="private")
    bobs.refresh_from_db()  # as the next request reads it
    run_turn(conversation=bobs, text="again")

    assert changed.repinned.absent == 1
    bobs.refresh_from_db()
    assert bobs.pinned_head is not None
    assert [(o, r) for o, r, _ in history(bobs)] == [
        ("absent", "block_too_large"),
        ("repin_requested", "made_private"),
        ("pinned", ""),
    ]
