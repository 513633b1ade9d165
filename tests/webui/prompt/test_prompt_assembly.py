"""The front of the prompt is a promise: fixed order, stable bytes, a slot that drops out."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from webui.extensions import TurnContext, TurnExtension
from webui.models import Conversation, Message, Soul
from webui.prompt.assembly import assemble_prompt
from webui.prompt.pins import settle_pins
from webui.prompt.vault import read_vault
from webui.text.canonical import canonical_json
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

BLOCK = '<memory soul="pippa" revision="r1">Alice likes tea.</memory>'


class BlockAndSlot(TurnExtension):
    name = "block-and-slot"

    def memory_block(self, *, turn: TurnContext) -> str | None:
        return BLOCK

    def turn_slot_parts(self, *, turn: TurnContext) -> list[str]:
        return [f"Background answer for {turn.user_message.content!r}"]


def first_prompt(conversation: Conversation, text: str = "hello") -> Any:
    message = Message.objects.create(conversation=conversation, role="user", content=text)
    turn = TurnContext(conversation=conversation, user_message=message, first_turn=True)
    settle_pins(turn)
    return assemble_prompt(turn, now=datetime(2026, 12, 2, 9, 30, tzinfo=UTC))


def test_system_is_vault_base_then_memory_block_then_viewer_disclosure(
    conversation: Conversation, extension: Any
) -> None:
    extension(BlockAndSlot())

    prompt = first_prompt(conversation)

    vault = read_vault(conversation.soul.vault_path).text
    assert prompt.system_sections == (
        vault,
        BLOCK,
        "You are talking with Alice, a household member.",
    )
    assert (
        prompt.system_text
        == f"{vault}\n\n{BLOCK}\n\nYou are talking with Alice, a household member."
    )


def test_without_extensions_there_is_no_block_between_vault_and_disclosure(
    conversation: Conversation,
) -> None:
    prompt = first_prompt(conversation)

    vault = read_vault(conversation.soul.vault_path).text
    assert prompt.system_text.startswith(vault + "\n\nYou are talking with Alice")


def test_staff_viewer_is_disclosed_as_an_admin(make_conversation: Any, make_user: Any) -> None:
    admin = make_user("bob", is_staff=True, first_name="Bob", last_name="Baker")

    prompt = first_prompt(make_conversation(viewer=admin))

    assert prompt.system_sections[-1] == "You are talking with Bob Baker, a household admin."


def test_unattended_run_says_nobody_is_present(make_conversation: Any) -> None:
    prompt = first_prompt(make_conversation(viewer=None, kind="job"))

    assert prompt.system_sections[-1] == (
        "No household member is present in this conversation: it is an unattended scheduled job."
    )


def test_per_turn_slot_holds_the_time_then_extension_parts(
    conversation: Conversation, extension: Any
) -> None:
    extension(BlockAndSlot())

    prompt = first_prompt(conversation, "hi")

    assert prompt.user_text == "hi"
    assert prompt.turn_slot == (
        "Current time: Wednesday 02 December 2026, 09:30 (UTC).",
        "Background answer for 'hi'",
    )


def test_a_failing_slot_extension_costs_only_its_own_part(
    conversation: Conversation, extension: Any
) -> None:
    class Broken(TurnExtension):
        def turn_slot_parts(self, *, turn: TurnContext) -> list[str]:
            raise RuntimeError("boom")

    extension(Broken())

    prompt = first_prompt(conversation)

    assert prompt.turn_slot == ("Current time: Wednesday 02 December 2026, 09:30 (UTC).",)


def test_slot_text_is_never_written_to_a_message_row(
    conversation: Conversation, extension: Any
) -> None:
    extension(BlockAndSlot())

    run_turn(conversation=conversation, text="first")
    run_turn(conversation=conversation, text="second")

    for row in Message.objects.all():
        stored = canonical_json([row.content, row.tool_uses, row.rounds])
        assert "Background answer" not in stored
        assert "Current time" not in stored


def test_each_request_starts_with_the_previous_one_minus_its_slot(
    conversation: Conversation,
    extension: Any,
    recording_tool: Any,
    sent_requests: list[dict[str, Any]],
) -> None:
    extension(BlockAndSlot())
    texts = ["hello", "remember tea ☕", "how are you?", "recall tea", "x" * 5000, "bye"]

    for text in texts:
        run_turn(conversation=conversation, text=text)

    # Two of the turns take a tool round, so there are two more vessel calls than turns.
    assert len(sent_requests) == len(texts) + 2
    for earlier, later in zip(sent_requests, sent_requests[1:], strict=False):
        assert canonical_json(earlier["system"]) == canonical_json(later["system"])
        assert canonical_json(earlier["tools"]) == canonical_json(later["tools"])
        stable = [dict(m) for m in earlier["messages"]]
        same_turn = newest_user_text(earlier) == newest_user_text(later)
        if not same_turn:
            # The per-turn slot is the newest user message's second part: it drops out next turn.
            newest = max(i for i, m in enumerate(stable) if m["role"] == "user")
            assert len(stable[newest]["content"]) == 2
            stable[newest]["content"] = stable[newest]["content"][:1]
        prefix = later["messages"][: len(stable)]
        assert [canonical_json(m) for m in prefix] == [canonical_json(m) for m in stable]


def newest_user_text(request: dict[str, Any]) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"][0]["text"]


def test_history_replays_tool_rounds_in_their_recorded_order(
    conversation: Conversation, recording_tool: Any, sent_requests: list[dict[str, Any]]
) -> None:

    run_turn(conversation=conversation, text="remember I like tea")
    run_turn(conversation=conversation, text="thanks")

    roles = [m["role"] for m in sent_requests[-1]["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    call = sent_requests[-1]["messages"][1]["content"][0]
    result = sent_requests[-1]["messages"][2]["content"][0]
    assert call["type"] == "tool_call"
    assert result["tool_call_id"] == call["id"]


def soul_of(vault: Path, slug: str) -> Soul:
    """A soul whose vault is ``vault``, holding one note: "I am Pippa."."""
    (vault / "Identity.md").write_text("I am Pippa.", encoding="utf-8")
    return Soul.objects.create(slug=slug, name=slug.title(), vault_path=str(vault))


def test_a_vault_edit_waits_for_the_next_conversation(
    make_conversation: Any, vault: Any, sent_requests: list[dict[str, Any]]
) -> None:
    from webui.models import VaultSnapshot

    soul = soul_of(vault, "edited")
    running = make_conversation(soul=soul)
    run_turn(conversation=running, text="hello")

    (vault / "Identity.md").write_text("I am Pippa, and I have changed.", encoding="utf-8")
    run_turn(conversation=running, text="again")
    fresh = make_conversation(soul=soul)
    run_turn(conversation=fresh, text="hello")

    first, second, third = (r["system"] for r in sent_requests)
    assert second == first
    assert "I have changed" not in second
    assert "I have changed" in third
    assert VaultSnapshot.objects.filter(soul=soul).count() == 2


def test_a_vault_lost_after_the_first_turn_still_answers_from_its_snapshot(
    make_conversation: Any, vault: Any, sent_requests: list[dict[str, Any]]
) -> None:
    conversation = make_conversation(soul=soul_of(vault, "kept"))
    run_turn(conversation=conversation, text="hello")
    (vault / "Identity.md").unlink()

    result = run_turn(conversation=conversation, text="still there?")

    assert result.assistant_message.content
    assert sent_requests[1]["system"] == sent_requests[0]["system"]


def writes_in(queries: list[dict[str, Any]]) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE"))]


def test_assembling_a_first_turns_prompt_writes_nothing_once_its_pins_are_settled(
    conversation: Conversation, extension: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    extension(BlockAndSlot())
    message = Message.objects.create(conversation=conversation, role="user", content="hello")
    turn = TurnContext(conversation=conversation, user_message=message, first_turn=True)
    settle_pins(turn)

    with CaptureQueriesContext(connection) as queries:
        prompt = assemble_prompt(turn)

    assert writes_in(queries.captured_queries) == []
    assert prompt.system_sections[0] == read_vault(conversation.soul.vault_path).text


def test_assembling_an_unsettled_turn_says_to_settle_its_pins_first(
    conversation: Conversation,
) -> None:
    from webui.models import VaultSnapshot
    from webui.prompt.assembly import UnsettledTurn

    message = Message.objects.create(conversation=conversation, role="user", content="hello")
    turn = TurnContext(conversation=conversation, user_message=message, first_turn=True)

    with pytest.raises(UnsettledTurn, match="settle the turn's pins"):
        assemble_prompt(turn)

    conversation.refresh_from_db()
    assert conversation.vault_sha256 == ""
    assert not VaultSnapshot.objects.exists()
