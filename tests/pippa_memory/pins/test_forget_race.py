"""A forget (or an item made private) that lands while another member's first turn is pinning
never leaves the item in that conversation's block: the tombstone recorded before the engine call
makes the pin step refuse the stale block, before storing it or once its pin is committed. The
forget is driven exactly in between, deterministically, against the reference engine over a
socket."""

from collections.abc import Callable
from typing import Any

import pytest
import requests
from django.utils import timezone

from pippa_memory.items import changes, services
from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import ItemTombstone, MemoryBlock
from pippa_memory.pins import head, records, repins, turn_block
from pippa_memory.pins.tombstones import record_tombstones, tombstoned_items
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import HEADERS, add_memory
from webui.models import Conversation

pytestmark = pytest.mark.django_db

SECRET = "The spare key is under the blue pot."


@pytest.fixture(autouse=True)
def nothing_rendered() -> None:
    turn_block.RENDERED.clear()


def blocks_holding(item_id: str) -> list[MemoryBlock]:
    return [block for block in MemoryBlock.objects.all() if item_id in block.items]


def the_pin(conversation: Conversation) -> tuple[str | None, str]:
    """The conversation's pinned revision and the reason of its latest pin record."""
    conversation.refresh_from_db()
    return conversation.pinned_head, conversation.pin_records.order_by("-id").first().reason


def once(action: Callable[[], Any]) -> Callable[[], None]:
    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            action()

    return run


def run_before_store(monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any]) -> None:
    """Run ``action`` after the head was fetched and checked, just before its block is stored."""
    real, first = head.store_block, once(action)

    def store(**kwargs: Any) -> MemoryBlock:
        first()
        return real(**kwargs)

    monkeypatch.setattr(head, "store_block", store)


def run_after_head(
    monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any], *, keep_answering_stale: bool
) -> None:
    """Run ``action`` once the engine answered the first head; with ``keep_answering_stale``,
    every later head call gets that first (stale) answer again."""
    real, first, answers = head.call_in_turn, once(action), []

    def call(method: str, path: str, **kwargs: Any) -> Any:
        if "/head" not in path:
            return real(method, path, **kwargs)
        if answers and keep_answering_stale:
            return answers[0]
        answers.append(real(method, path, **kwargs))
        first()
        return answers[-1]

    monkeypatch.setattr(head, "call_in_turn", call)


def test_a_forget_landing_between_the_head_and_the_store_never_rides_the_conversation(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any, monkeypatch: Any
) -> None:
    forgotten = add_memory(memory_on, SECRET, by=user)
    bobs = make_conversation(viewer=bob)
    run_before_store(
        monkeypatch, lambda: changes.forget_item(soul=bobs.soul, user=user, item_id=forgotten)
    )

    turn_block.settle_turn_pin(bobs)

    assert the_pin(bobs) == (None, records.STALE_BLOCK)
    assert turn_block.pinned_block(bobs) is None
    assert blocks_holding(forgotten) == []
    turn_block.settle_turn_pin(bobs)  # the next turn asks again
    assert the_pin(bobs)[1] == records.ENGINE_RECOVERED
    assert SECRET not in turn_block.pinned_block(bobs)
    assert blocks_holding(forgotten) == []


def test_an_item_made_private_while_a_head_is_fetched_is_refused_and_the_head_asked_again(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any, monkeypatch: Any
) -> None:
    shared = add_memory(memory_on, SECRET, by=user)
    bobs, alices = make_conversation(viewer=bob), make_conversation(viewer=user)
    make_private = lambda: changes.change_scope(  # noqa: E731
        soul=bobs.soul, user=user, item_id=shared, scope="private"
    )
    run_after_head(monkeypatch, make_private, keep_answering_stale=False)

    turn_block.settle_turn_pin(bobs)
    turn_block.settle_turn_pin(alices)

    revision, reason = the_pin(bobs)
    assert revision is not None
    assert reason == ""
    assert SECRET not in turn_block.pinned_block(bobs)
    assert [block.viewer for block in blocks_holding(shared)] == [str(user.pk)]
    assert SECRET in turn_block.pinned_block(alices)  # the owner's own blocks keep it


def test_a_head_still_stale_when_asked_again_pins_absent_as_an_engine_failure(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any, monkeypatch: Any
) -> None:
    forgotten = add_memory(memory_on, SECRET, by=user)
    bobs = make_conversation(viewer=bob)
    forget = lambda: changes.forget_item(soul=bobs.soul, user=user, item_id=forgotten)  # noqa: E731
    run_after_head(monkeypatch, forget, keep_answering_stale=True)

    turn_block.settle_turn_pin(bobs)

    assert the_pin(bobs) == (None, records.STALE_BLOCK)
    assert blocks_holding(forgotten) == []
    assert repins.absence_to_ask_again(bobs) is not None


def test_a_stored_block_holding_a_tombstoned_item_is_repinned_as_forgotten_at_a_later_turn(
    memory_on: ReferenceEngine, bob: Any, make_conversation: Any
) -> None:
    bobs = make_conversation(viewer=bob)
    MemoryBlock.objects.create(
        soul=bobs.soul, revision="r-old", viewer=str(bob.pk), text=SECRET,
        sha256=keyed_sha256(SECRET), items=["m-gone"],
    )  # fmt: skip
    Conversation.objects.filter(pk=bobs.pk).update(pinned_head="r-old", pinned_at=timezone.now())
    bobs.refresh_from_db()
    record_tombstones(soul=bobs.soul, item_ids={"m-gone"})

    turn_block.settle_turn_pin(bobs)

    revision, reason = the_pin(bobs)
    assert revision not in (None, "r-old")
    assert reason == records.FORGOTTEN
    assert SECRET not in turn_block.pinned_block(bobs)


def test_a_cached_block_holding_a_tombstoned_item_is_repinned_as_forgotten_at_a_later_turn(
    memory_on: ReferenceEngine, user: Any, bob: Any, make_conversation: Any
) -> None:
    forgotten = add_memory(memory_on, SECRET, by=user)
    bobs = make_conversation(viewer=bob)
    turn_block.settle_turn_pin(bobs)
    assert SECRET in turn_block.pinned_block(bobs)
    assert turn_block.RENDERED.get(turn_block.rendered_key(bobs)) is not None  # kept warm
    # A forget the engine applied but whose answer never came back: its tombstone stays, and no
    # re-pin was requested, so only the check of the cached block stands between it and the prompt.
    record_tombstones(soul=bobs.soul, item_ids={forgotten})
    gone = requests.delete(
        f"{memory_on.url}/v1/souls/pippa/items/{forgotten}?viewer={user.pk}",
        headers=HEADERS,
        timeout=5,
    )
    assert gone.status_code == 200, gone.text

    cause = turn_block.settle_turn_pin(bobs, later_turn=True)

    revision, reason = the_pin(bobs)
    assert (cause, reason) == (records.FORGOTTEN, records.FORGOTTEN)
    assert SECRET not in (turn_block.pinned_block(bobs) or "")


@pytest.mark.parametrize("status", [400, 404])
def test_a_forget_the_engine_refuses_for_sure_withdraws_its_tombstone(
    memory_on: ReferenceEngine, user: Any, soul: Any, status: int
) -> None:
    kept = add_memory(memory_on, SECRET, by=user)
    memory_on.set_fault(
        "error", status=status, paths=[f"/v1/souls/pippa/items/{kept}"], methods=["DELETE"]
    )

    with pytest.raises(services.MemoryRefusal):
        changes.forget_item(soul=soul, user=user, item_id=kept)

    assert not ItemTombstone.objects.exists()


@pytest.mark.parametrize(
    ("fault", "options"),
    [("error", {"status": 503}), ("throttle", {}), ("reset", {}), ("hang", {"seconds": 5})],
)
def test_a_forget_the_engine_did_not_confirm_keeps_its_tombstone(
    memory_on: ReferenceEngine,
    user: Any,
    soul: Any,
    configure: Any,
    fault: str,
    options: dict[str, Any],
) -> None:
    configure(MANAGE_BUDGET=1.0)
    kept = add_memory(memory_on, SECRET, by=user)
    memory_on.set_fault(
        fault, paths=[f"/v1/souls/pippa/items/{kept}"], methods=["DELETE"], **options
    )

    changed = changes.forget_item(soul=soul, user=user, item_id=kept)

    assert not changed.confirmed
    assert list(ItemTombstone.objects.values_list("item_id", "spared_viewer")) == [(kept, "")]


def test_every_item_of_a_large_block_is_checked_against_its_tombstones(soul: Any) -> None:
    # The check runs at every turn as a plain statement, in chunks of ids: none may be skipped.
    items = [f"item-{n:04d}" for n in range(1200)]
    forgotten = {items[0], items[499], items[500], items[1199]}
    record_tombstones(soul=soul, item_ids=forgotten)
    record_tombstones(soul=soul, item_ids={items[900]}, spared_viewer="bob")

    assert tombstoned_items(soul_id=soul.id, viewer="bob", items=items) == forgotten
    assert tombstoned_items(soul_id=soul.id, viewer="", items=items) == forgotten | {items[900]}
    assert tombstoned_items(soul_id=soul.id, viewer="", items=items[1:499]) == set()


def test_an_id_holding_a_nul_is_no_tombstoned_item_and_no_server_error(soul: Any) -> None:
    # The brain door's fuzzing sent one: PostgreSQL refuses a NUL in a text parameter outright.
    record_tombstones(soul=soul, item_ids={"m1"})

    assert tombstoned_items(soul_id=soul.id, viewer="", items=["m\x001", "m1"]) == {"m1"}
