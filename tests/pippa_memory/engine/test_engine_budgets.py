"""Each caller of the engine has its own budget, over real sockets to the reference engine: a
brief or bundle the engine takes seconds to curate arrives, while a chat turn still gives up within
its own budget; a tool call, a delivery and a management call wait for their own, never the chat
turn's; and an unattended run's calls share its budget, no read waiting past what is left."""

import time
from typing import Any

import pytest
from django.test import Client

from pippa_memory.conf import DEFAULTS
from pippa_memory.engine.client import call_engine
from pippa_memory.models import OutboxEvent, PinRecord
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import add_memory
from webui.models import Conversation, ScheduledJob, Soul, Vessel
from webui.turns.service import run_turn
from webui.unattended.runner import run_job, run_wake

pytestmark = pytest.mark.django_db

#: The chat turn's budget and read timeout as shipped (the suite's fixture shortens them).
SHIPPED_CHAT = {name: DEFAULTS[name] for name in ("CHAT_BUDGET", "READ_TIMEOUT")}


@pytest.fixture
def job(soul: Soul, offline_vessel: Vessel) -> ScheduledJob:
    return ScheduledJob.objects.create(
        name="Morning note", soul=soul, vessel=offline_vessel, schedule="every 1h"
    )


def test_a_brief_the_engine_takes_seconds_over_is_a_brief_while_a_chat_turn_gives_up_in_time(
    memory_on: ReferenceEngine, configure: Any, soul: Soul, conversation: Conversation
) -> None:
    configure(**SHIPPED_CHAT)
    memory_on.state.remember("pippa", "Ada's birthday is on Thursday.")
    memory_on.set_fault("latency", seconds=3.0)

    run = run_wake(soul=soul)
    started = time.monotonic()
    run_turn(conversation=conversation, text="hello")
    chat_seconds = time.monotonic() - started

    assert run.memory["source"] == "brief"
    assert chat_seconds < DEFAULTS["CHAT_BUDGET"] + 0.4
    pin = PinRecord.objects.get(conversation=conversation)
    assert (pin.outcome, pin.reason) == ("absent", "timeout")


def test_a_jobs_bundle_the_engine_takes_seconds_over_is_carried(
    memory_on: ReferenceEngine, configure: Any, job: ScheduledJob
) -> None:
    configure(**SHIPPED_CHAT)
    revision = memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    memory_on.set_fault("latency", seconds=3.0, paths=["/v1/bundles"])

    run = run_job(job)

    assert run.memory["source"] == "bundle"
    assert run.memory["revision"] == revision


def test_an_unattended_runs_calls_share_its_budget_and_no_read_outlasts_it(
    memory_on: ReferenceEngine, configure: Any, job: ScheduledJob
) -> None:
    configure(UNATTENDED_BUDGET=2.0, CHAT_BUDGET=10.0, READ_TIMEOUT=10.0)
    memory_on.state.remember("pippa", "Bins go out on Tuesday.")
    memory_on.set_fault("latency", seconds=1.4)

    started = time.monotonic()
    run = run_job(job)
    seconds = time.monotonic() - started

    # The head took 1.4 s of the run's 2 s (leaving the head 0.6 s to spare on a busy machine);
    # the bundle's read waited for the rest, no longer.
    assert [r["path"] for r in memory_on.received] == ["/v1/souls/pippa/head", "/v1/bundles"]
    assert run.memory == {"source": "none", "reason": "timeout"}
    assert seconds < 2.8


def test_a_tool_call_waits_for_its_own_budget_not_the_chat_turns_read_timeout(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    configure(**SHIPPED_CHAT, TOOL_BUDGET=3.0)
    memory_on.state.remember("pippa", "The spare key is under the blue pot.")
    memory_on.set_fault("latency", seconds=1.5, paths=["/v1/recall"])

    result = run_turn(conversation=conversation, text="recall key")

    output = result.assistant_message.tool_uses[0]["output"]
    assert [item["text"] for item in output["items"]] == ["The spare key is under the blue pot."]


def test_a_delivery_waits_for_its_own_budget_not_the_chat_turns_read_timeout(
    memory_on: ReferenceEngine, configure: Any, conversation: Conversation
) -> None:
    from pippa_memory.outbox.delivery import deliver_due

    configure(**SHIPPED_CHAT, OUTBOX_DELIVERY_TIMEOUT=10.0)
    run_turn(conversation=conversation, text="hello")
    memory_on.set_fault("latency", seconds=1.5, paths=["/v1/events"])

    outcomes = deliver_due(limit=1)

    assert [outcome.kind for outcome in outcomes] == ["delivered"]
    assert OutboxEvent.objects.get().status == "delivered"


def test_the_memory_page_waits_for_the_management_budget_not_the_chat_turns(
    memory_on: ReferenceEngine, configure: Any, soul: Soul, user: Any
) -> None:
    configure(**SHIPPED_CHAT, MANAGE_BUDGET=5.0)
    add_memory(memory_on, "The boiler code is 4471.", by=user)
    memory_on.set_fault("latency", seconds=1.7, paths=["/v1/souls/pippa/items"])
    client = Client()
    client.force_login(user)

    html = client.get("/memory/").content.decode()

    assert "The boiler code is 4471." in html


def test_a_call_without_a_budget_of_its_own_is_refused(memory_on: ReferenceEngine) -> None:
    with pytest.raises(TypeError):
        call_engine("GET", "/v1/souls/pippa/head")  # type: ignore[call-arg]
    assert memory_on.received == []
