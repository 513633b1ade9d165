"""The cache ledger on the host: a row per vessel call on all seven adapters, hashed from the
request the adapter really sent (slot and cache markers left out), usage mapped from each
provider's documented fields, no drift over forty turns and a rename, and drift named, section by
section, when something is made to move. Memory on and the engine down are in
``tests/pippa_memory/pins/test_ledger_memory.py``."""

import logging
from typing import Any

import pytest
import responses
from django.conf import settings
from django.db import DatabaseError
from django.utils.crypto import salted_hmac

from provider_doubles import USAGE, Kit, strip_cache_markers, strip_slot
from provider_doubles.prompt_cache import ProviderCache, offline_cached, serve_cached, tokens
from tests.support.fakes import SecondRoundFailsOnce
from tests.support.vessel_contract import TURNS, Provider
from webui.extensions import TurnContext, TurnExtension
from webui.ledger import recorder
from webui.ledger.recorder import stable_prefix
from webui.models import Conversation, Message, VaultSnapshot, Vessel, VesselCall
from webui.prompt.history import drop_cached_history
from webui.prompt_types import HistoryMessage, Prompt, ToolRound, ToolUse
from webui.text.canonical import canonical_bytes
from webui.turns.events import Delta, StopSignal
from webui.turns.service import TurnError, outcome_of, retry_turn, run_turn, stream_turn
from webui.vessels import registry
from webui.vessels.offline import OfflineAdapter
from webui.vessels.registry import adapter_for, build_adapter

pytestmark = pytest.mark.django_db

FORTY_TURNS = (TURNS * 2)[:40]
FRONT = ("tools", "vault", "memory", "disclosure")
#: Where each provider's request keeps its system text, as the providers document it; ``None``:
#: it is the first message.
SYSTEM_AT = {
    "anthropic": "system",
    "offline": "system",
    "openai": None,
    "openai_compatible": None,
    "ollama": None,
    "openai_responses": "instructions",
    "gemini": "systemInstruction",
}


def sha(data: bytes) -> str:
    """A section's hash as docs/ledger.md states it: HMAC-SHA256 under the key Django's
    ``salted_hmac`` derives from the site's ``SECRET_KEY`` for the ledger's purpose."""
    return salted_hmac(
        "webui.ledger.section", data, secret=settings.SECRET_KEY, algorithm="sha256"
    ).hexdigest()


def calls_of(conversation: Conversation) -> list[VesselCall]:
    return list(VesselCall.objects.filter(conversation=conversation).order_by("id"))


def drifts(conversation: Conversation) -> list[tuple[str, str]]:
    return [(c.drift_section, c.drift_cause) for c in calls_of(conversation) if c.drift_section]


def tool_turn(text: str) -> bool:
    return text.split()[0] in ("remember", "recall", "ask")


class TestEveryAdapter:
    """What the ledger promises on each of the seven adapters."""

    def test_forty_turns_with_a_rename_halfway_leave_a_row_per_call_and_no_drift(
        self, chat: Conversation, provider: Provider, user: Any
    ) -> None:
        for index, text in enumerate(FORTY_TURNS):
            if index == 20:
                user.first_name, user.is_staff = "Renamed", True
                user.save()
            run_turn(conversation=chat, text=text)

        calls = calls_of(chat)
        assert len(calls) == len(provider.requests) == 40 + sum(map(tool_turn, FORTY_TURNS))
        assert drifts(chat) == []
        assert len({tuple(c.sections[name] for name in FRONT) for c in calls}) == 1
        assert "Renamed" not in canonical_bytes(provider.requests[-1]).decode()
        assert [c.round for c in calls[:3]] == [0, 0, 1]  # "remember" took a tool round

    def test_the_sections_are_hashed_from_the_request_as_sent_without_slot_or_markers(
        self, chat: Conversation, provider: Provider, kit: Kit
    ) -> None:
        run_turn(conversation=chat, text="hello")
        run_turn(conversation=chat, text="remember the spare key is under the blue pot")

        for call, request in zip(calls_of(chat), provider.requests, strict=True):
            sent = strip_cache_markers(request)
            messages, removed = strip_slot(sent[kit.messages_key])
            assert removed == 1
            system_key = SYSTEM_AT[kit.adapter]
            # The system text in its own field, or as the first message.
            system = canonical_bytes(sent[system_key]) if system_key else b""
            listed = b"[" + b",".join(canonical_bytes(m) for m in messages) + b"]"
            if not system_key:
                messages = messages[1:]
            encoded = [canonical_bytes(m) for m in messages]
            tools = canonical_bytes(sent.get("tools") or [])
            history = encoded[: call.history_messages]
            turn = encoded[call.history_messages :]
            assert call.sections["tools"] == sha(tools)
            assert call.sections["history"] == sha(b"[" + b",".join(history) + b"]")
            assert call.sections["turn"] == sha(b"[" + b",".join(turn) + b"]")
            assert call.turn_messages == len(turn)
            assert call.prefix_bytes == len(tools) + len(system) + len(listed)

    @pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
    def test_usage_is_mapped_from_each_providers_documented_fields(
        self, chat: Conversation, provider: Provider, kit: Kit, streamed: bool
    ) -> None:
        events = stream_turn(conversation=chat, text="hello", stop=None, streamed=streamed)
        reply = outcome_of(events).assistant_message

        [call] = calls_of(chat)
        usage = (call.input_tokens, call.output_tokens, call.cache_read_tokens)
        if kit.adapter == "offline":  # it counts a quarter token per character of its request
            request_chars = len(canonical_bytes(provider.requests[0]).decode())
            assert usage == (request_chars // 4, len(reply.content) // 4, 0)
        else:
            cached = 0 if kit.adapter == "ollama" else USAGE["cached"]
            assert usage == (USAGE["prompt"], USAGE["output"], cached)
        assert call.cache_write_tokens == (USAGE["written"] if kit.adapter == "anthropic" else 0)
        assert (call.vessel, call.adapter, call.model) == (chat.vessel, kit.adapter, kit.model)

    def test_against_a_prefix_cache_each_call_reads_back_the_previous_calls_stable_prefix(
        self, chat: Conversation, kit: Kit, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Forty turns against a provider that caches by prefix as the providers do
        (``provider_doubles.prompt_cache``: tools, system, then messages, slot and markers left
        out; Anthropic at its breakpoints), reporting it in its own usage fields: every call after
        the first has, in its ledger row, the whole stable prefix of the call before it as cached.
        Ollama reports only the tokens it evaluated, so its ledger rows say nothing was cached."""
        cache = ProviderCache(
            adapter=build_adapter(chat.vessel), minimum=0, explicit=kit.adapter == "anthropic"
        )
        if kit.adapter == "offline":
            monkeypatch.setattr(OfflineAdapter, "send", offline_cached(cache, OfflineAdapter.send))
            for text in FORTY_TURNS:
                run_turn(conversation=chat, text=text)
        else:
            with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
                serve_cached(rsps, kit, cache)
                for text in FORTY_TURNS:
                    run_turn(conversation=chat, text=text)

        calls = calls_of(chat)
        assert len(calls) == 40 + sum(map(tool_turn, FORTY_TURNS))
        assert drifts(chat) == []
        if kit.adapter == "ollama":
            assert [call.cache_read_tokens for call in calls] == [0] * len(calls)
            return
        short = [
            (index, call.cache_read_tokens, tokens(previous.prefix_bytes))
            for index, (previous, call) in enumerate(zip(calls, calls[1:], strict=False), 1)
            if call.cache_read_tokens < tokens(previous.prefix_bytes)
        ]
        assert short == []
        assert all(call.cache_read_tokens > 0 for call in calls[1:])


# -- drift, section by section ----------------------------------------------------------------


@pytest.fixture
def two_turns(conversation: Conversation, recording_tool: Any) -> Conversation:
    run_turn(conversation=conversation, text="hello")
    run_turn(conversation=conversation, text="remember the bins go out on Tuesday")
    conversation.refresh_from_db()
    assert drifts(conversation) == []
    return conversation


def test_tool_definitions_that_move_are_drift_in_tools_with_no_known_cause_and_a_warning(
    two_turns: Conversation, caplog: pytest.LogCaptureFixture
) -> None:
    moved = [{**two_turns.offered_tools[0], "description": "Changed behind the pin."}]
    Conversation.objects.filter(pk=two_turns.pk).update(offered_tools=moved)
    two_turns.refresh_from_db()

    with caplog.at_level(logging.WARNING, logger="webui.ledger.recorder"):
        run_turn(conversation=two_turns, text="again")

    assert drifts(two_turns) == [("tools", "")]
    [warning] = [r for r in caplog.records if r.name == "webui.ledger.recorder"]
    assert str(two_turns.pk) in warning.getMessage()
    assert "no known cause" in warning.getMessage()


def test_a_vault_base_that_moves_is_drift_in_vault(two_turns: Conversation) -> None:
    VaultSnapshot.objects.create(soul=two_turns.soul, sha256="f" * 64, text="Another vault.")
    Conversation.objects.filter(pk=two_turns.pk).update(vault_sha256="f" * 64)
    two_turns.refresh_from_db()

    run_turn(conversation=two_turns, text="again")

    assert drifts(two_turns) == [("vault", "")]


class MovingBlock(TurnExtension):
    """A memory block that changes at a turn chosen by the test, saying why or not."""

    name = "moving-block"

    def __init__(self) -> None:
        self.block = "Block one."
        self.cause: str | None = None

    def settle(self, *, turn: TurnContext) -> str | None:
        return self.cause

    def memory_block(self, *, turn: TurnContext) -> str | None:
        return self.block


@pytest.mark.parametrize(
    ("cause", "recorded"), [("repin: engine rebuilt", "repin: engine rebuilt"), (None, "")]
)
def test_a_memory_block_that_moves_is_drift_in_memory_with_the_cause_settling_gave(
    conversation: Conversation, extension: Any, cause: str | None, recorded: str
) -> None:
    block = extension(MovingBlock())
    run_turn(conversation=conversation, text="hello")
    block.block, block.cause = "Block two.", cause

    run_turn(conversation=conversation, text="again")
    block.cause = None
    run_turn(conversation=conversation, text="and again")

    assert drifts(conversation) == [("memory", recorded)]


def test_a_settle_cause_with_unmoved_bytes_is_no_drift(
    conversation: Conversation, extension: Any
) -> None:
    block = extension(MovingBlock())
    run_turn(conversation=conversation, text="hello")
    block.cause = "repin: same head"  # a re-pin that lands on the same bytes moves nothing

    run_turn(conversation=conversation, text="again")

    assert drifts(conversation) == []


def test_a_conversation_from_before_disclosures_were_pinned_pins_its_own_once_with_its_cause(
    conversation: Conversation, user: Any
) -> None:
    run_turn(conversation=conversation, text="hello")
    Conversation.objects.filter(pk=conversation.pk).update(disclosure="")  # as before 0009
    conversation.refresh_from_db()
    user.first_name = "Renamed"
    user.save()

    run_turn(conversation=conversation, text="again")
    run_turn(conversation=conversation, text="and again")

    assert drifts(conversation) == [("disclosure", "disclosure_pinned")]
    conversation.refresh_from_db()
    assert conversation.disclosure == "You are talking with Renamed, a household member."


def test_an_old_conversation_pinning_an_unchanged_disclosure_is_no_drift(
    conversation: Conversation,
) -> None:
    run_turn(conversation=conversation, text="hello")
    Conversation.objects.filter(pk=conversation.pk).update(disclosure="")
    conversation.refresh_from_db()

    run_turn(conversation=conversation, text="again")

    assert drifts(conversation) == []


def test_an_edited_message_is_drift_in_history(two_turns: Conversation) -> None:
    first = two_turns.messages.order_by("sequence").first()
    # Nothing in the app edits a row; one edited behind its back (SQL) is read by any process
    # that has not cached this history yet, as this one has not once its cache is dropped.
    Message.objects.filter(pk=first.pk).update(content="edited afterwards")
    drop_cached_history(two_turns.pk)

    run_turn(conversation=two_turns, text="again")

    assert drifts(two_turns) == [("history", "")]


def test_another_vessel_mid_conversation_is_drift_caused_by_the_vessel_change(
    two_turns: Conversation,
) -> None:
    other = Vessel.objects.create(slug="other", name="Other", adapter="offline", model="other-1")
    Conversation.objects.filter(pk=two_turns.pk).update(vessel=other)
    two_turns.refresh_from_db()

    run_turn(conversation=two_turns, text="again")
    run_turn(conversation=two_turns, text="and again")

    # The bytes held (the offline request names no model in its prefix), the cache did not.
    assert drifts(two_turns) == [("vessel", "vessel_changed")]


def test_a_tool_round_replayed_differently_within_a_turn_is_drift_in_turn(
    offline_vessel: Vessel,
) -> None:
    adapter = adapter_for(offline_vessel)
    use = ToolUse(id="call_1", name="memory", input={"verb": "recall", "text": "x"}, output="a")
    base = Prompt(
        conversation_id="c",
        system_sections=("Vault.", "You are talking with Alice, a household member."),
        history=(HistoryMessage(id="1", role="user", text="hello"),),
        user_text="recall x",
        turn_slot=("Current time: now.",),
        user_message_id="2",
    )
    first = base.with_round(ToolRound(text="", tool_uses=(use,)))
    honest = first.with_round(ToolRound(text="", tool_uses=(use,)))
    altered = base.with_round(
        ToolRound(text="", tool_uses=(ToolUse(**{**vars(use), "output": "b"}),))
    )
    altered = altered.with_round(ToolRound(text="", tool_uses=(use,)))

    prefix = stable_prefix(adapter, prompt=first, tools=[])
    previous = VesselCall(
        user_message_id=1,
        sections=prefix.sections,
        sections_key=prefix.hasher.key_id,
        history_messages=prefix.history_messages,
        turn_messages=prefix.turn_messages,
    )

    extends = stable_prefix(adapter, prompt=honest, tools=[])
    moved = stable_prefix(adapter, prompt=altered, tools=[])
    hasher = prefix.hasher
    assert recorder.first_moved(previous, extends, same_turn=True, hasher=hasher) is None
    assert recorder.first_moved(previous, moved, same_turn=True, hasher=hasher) == "turn"
    assert recorder.first_moved(previous, moved, same_turn=False, hasher=hasher) == "history"


# -- the rename, and the ledger never breaking a turn ---------------------------------------------


def test_a_rename_moves_nothing_in_a_live_conversation_and_reaches_the_next_one(
    conversation: Conversation, make_conversation: Any, user: Any, sent_requests: list[Any]
) -> None:
    run_turn(conversation=conversation, text="hello")
    user.first_name = "Zoë"
    user.save()

    run_turn(conversation=conversation, text="again")
    fresh = make_conversation(viewer=user)
    run_turn(conversation=fresh, text="hello")

    assert sent_requests[0]["system"] == sent_requests[1]["system"]
    assert "You are talking with Zoë" in sent_requests[2]["system"]
    assert drifts(conversation) == []
    assert drifts(fresh) == []


def test_a_ledger_row_that_cannot_be_written_costs_the_turn_nothing(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(self: VesselCall, *args: Any, **kwargs: Any) -> None:
        raise DatabaseError("disk full")

    monkeypatch.setattr(VesselCall, "save", refuse)

    result = run_turn(conversation=conversation, text="hello")

    assert result.assistant_message.content.startswith("(offline)")
    assert Message.objects.filter(conversation=conversation).count() == 2
    assert "could not save a call" in caplog.text


def test_a_prefix_that_cannot_be_read_costs_the_turn_nothing(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a defect in the ledger")

    monkeypatch.setattr(recorder, "stable_prefix", broken)

    run_turn(conversation=conversation, text="hello")

    assert Message.objects.filter(conversation=conversation).count() == 2
    assert not VesselCall.objects.exists()
    assert "could not read call 0" in caplog.text


def test_a_call_stopped_mid_answer_is_kept_marked_stopped_and_the_next_turn_extends_it(
    conversation: Conversation,
) -> None:
    stop = StopSignal()
    for event in stream_turn(conversation=conversation, text="a story", stop=stop, streamed=True):
        if isinstance(event, Delta):
            stop.set()

    run_turn(conversation=conversation, text="go on")

    stopped, following = calls_of(conversation)
    assert stopped.stopped
    assert (stopped.input_tokens, stopped.output_tokens) == (0, 0)  # never reported
    assert not following.stopped
    assert following.input_tokens > 0
    assert drifts(conversation) == []


def test_a_retry_after_a_failed_round_continues_the_chain_with_no_drift(
    conversation: Conversation, recording_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SecondRoundFailsOnce, "failures_left", 1)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", SecondRoundFailsOnce)
    run_turn(conversation=conversation, text="hello")
    with pytest.raises(TurnError):
        run_turn(conversation=conversation, text="remember I like tea")

    retry_turn(conversation=conversation)
    run_turn(conversation=conversation, text="and now?")

    # The failed call left no row; the kept round's call and the retried one did.
    assert [c.round for c in calls_of(conversation)] == [0, 0, 1, 0]
    assert drifts(conversation) == []
