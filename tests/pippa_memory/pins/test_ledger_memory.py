"""The cache ledger with the memory plug-in, against the reference engine over a socket: no drift
over forty turns on every adapter with memory on and with the engine down (the head moving and the
member renaming themselves on the way), and each deliberate re-pin drift in ``memory`` with its
cause: an admin's (with the reason), a forget's (``forgotten``), an engine that came back
(``engine_recovered``)."""

import logging
from typing import Any

import pytest
import responses

from pippa_memory.pins.records import request_repin
from provider_doubles import ALL_KITS, kit_vessel
from reference_engine.server import ReferenceEngine
from tests.support.clients import api_as
from tests.support.household_memory import add_memory
from tests.support.memory_turns import first_turn_while_down
from tests.support.vessel_contract import TURNS
from webui.ledger.section_hash import site_hasher
from webui.models import Conversation, Soul, VesselCall
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

FORTY_TURNS = (TURNS * 2)[:40]
NO_BLOCK = site_hasher()(b"")  # the empty memory section, hashed as the ledger keys it


def calls_of(conversation: Conversation) -> list[VesselCall]:
    return list(VesselCall.objects.filter(conversation=conversation).order_by("id"))


def drifts(conversation: Conversation) -> list[tuple[str, str]]:
    return [(c.drift_section, c.drift_cause) for c in calls_of(conversation) if c.drift_section]


@pytest.mark.parametrize("engine_state", ["memory on", "engine down"])
@pytest.mark.parametrize("kit_class", ALL_KITS, ids=lambda k: k.adapter)
def test_forty_turns_on_every_adapter_leave_no_drift(
    kit_class: Any,
    engine_state: str,
    memory_on: ReferenceEngine,
    configure: Any,
    soul: Soul,
    user: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory_on.state.remember("pippa", "The bins go out on Tuesday.")
    if engine_state == "engine down":
        configure(URL="http://127.0.0.1:9")  # nothing listens there: refused
    kit = kit_class()
    conversation = Conversation.objects.create(
        soul=soul, vessel=kit_vessel(kit, monkeypatch), viewer=user
    )

    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add_passthru(memory_on.url)
        if kit.adapter != "offline":  # the offline vessel answers itself
            kit.serve(rsps)
        for index, text in enumerate(FORTY_TURNS):
            if index == 20:
                memory_on.state.remember("pippa", "Learned halfway: the head moves.")
                user.first_name = "Renamed"
                user.save()
            run_turn(conversation=conversation, text=text)

    calls = calls_of(conversation)
    assert len(calls) > 40  # the tool turns took rounds
    assert drifts(conversation) == []
    assert {c.sections["memory"] for c in calls} == (
        {NO_BLOCK} if engine_state == "engine down" else {calls[0].sections["memory"]}
    )
    assert engine_state == "engine down" or calls[0].sections["memory"] != NO_BLOCK


def test_an_admin_repin_is_the_one_drift_in_ten_turns_with_its_reason_and_a_warning(
    memory_on: ReferenceEngine,
    conversation: Conversation,
    make_user: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    for text in ("hello", "the second", "the third", "the fourth", "the fifth"):
        run_turn(conversation=conversation, text=text)
    memory_on.state.remember("pippa", "Learned since the pin.")
    request_repin(
        conversation=conversation, requested_by=make_user("root", is_staff=True), reason="rebuilt"
    )

    with caplog.at_level(logging.WARNING, logger="webui.ledger.recorder"):
        for text in ("six", "seven", "eight", "nine", "ten"):
            run_turn(conversation=conversation, text=text)

    assert drifts(conversation) == [("memory", "repin: rebuilt")]
    assert calls_of(conversation)[5].drift_section == "memory"
    [warning] = [r.getMessage() for r in caplog.records if r.name == "webui.ledger.recorder"]
    assert str(conversation.pk) in warning
    assert "repin: rebuilt" in warning


def test_an_admin_repin_onto_the_same_head_moves_nothing_and_is_no_drift(
    memory_on: ReferenceEngine, conversation: Conversation, make_user: Any
) -> None:
    memory_on.state.remember("pippa", "Known from the start.")
    run_turn(conversation=conversation, text="hello")
    request_repin(
        conversation=conversation, requested_by=make_user("root", is_staff=True), reason="check"
    )

    run_turn(conversation=conversation, text="again")

    assert drifts(conversation) == []


def test_a_forget_repin_is_drift_in_memory_caused_by_forgotten(
    memory_on: ReferenceEngine, conversation: Conversation, user: Any
) -> None:
    add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    forgotten = add_memory(memory_on, "The spare key is under the blue pot.", by=user)
    run_turn(conversation=conversation, text="hello")

    response = api_as(user).delete(f"/api/memory/items/{forgotten}/?soul=pippa")
    assert response.status_code == 200, response.content
    conversation.refresh_from_db()
    run_turn(conversation=conversation, text="again")

    assert drifts(conversation) == [("memory", "forgotten")]


def test_an_engine_that_comes_back_is_drift_in_memory_caused_by_engine_recovered(
    memory_on: ReferenceEngine, conversation: Conversation
) -> None:
    memory_on.state.remember("pippa", "Alice takes her tea with honey.")
    first_turn_while_down(memory_on, conversation)

    run_turn(conversation=conversation, text="again")
    run_turn(conversation=conversation, text="and again")

    assert drifts(conversation) == [("memory", "engine_recovered")]
