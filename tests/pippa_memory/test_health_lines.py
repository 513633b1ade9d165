"""The memory plug-in's lines on the health page (issue 38, point 2), reaching it through the
host's extension point: the delivery worker's heartbeat, Pippa's memory (answering, unreachable,
paused by the breaker, off, not set), what reaches it (waiting, dead) and the brain door's
configuration; the delivery worker's heartbeat and its probe of the real reference engine."""

import re
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from pippa_memory.health import engine_line, start_delivery_heartbeat
from pippa_memory.models import OutboxEvent
from tests.support.brain_door import BRAIN_SECRET
from tests.support.live_servers import free_port
from webui.models import ProcessHeartbeat, Soul, Vessel

pytestmark = pytest.mark.django_db


def lines(client: Client) -> dict[str, dict[str, Any]]:
    return {line["key"]: line for line in client.get("/status.json").json()["lines"]}


def outbox_event(soul: Soul, **fields: Any) -> OutboxEvent:
    return OutboxEvent.objects.create(
        soul=soul,
        conversation_id=uuid.uuid4(),
        message_id=uuid.uuid4(),
        payload={"type": "conversation.turn"},
        **fields,
    )


def test_the_page_shows_the_plug_ins_four_lines(staff_client: Client, memory_on: Any) -> None:
    page = staff_client.get("/status/").content.decode()

    for key in ("delivery", "engine", "deliveries", "brain_door"):
        assert f'id="health-{key}"' in page


def test_an_engine_that_answers_is_green_and_its_answer_is_its_heartbeat(
    staff_client: Client, memory_on: Any
) -> None:
    engine = lines(staff_client)["engine"]

    assert engine["state"] == "ok"
    assert re.fullmatch(r"It answers, in \d+ ms\.", engine["sentence"])
    assert engine["details"]["breaker"] == "closed"
    assert ProcessHeartbeat.objects.filter(role="engine", host=memory_on.url).exists()


def test_an_engine_that_cannot_be_reached_is_red_with_what_to_do(
    staff_client: Client, configure: Any
) -> None:
    configure(URL=f"http://127.0.0.1:{free_port()}")

    engine = lines(staff_client)["engine"]

    assert engine["state"] == "failing"
    assert engine["sentence"].startswith("It cannot be reached now (")
    assert "Chat goes on without memory" in engine["what_to_do"]
    assert engine["details"]["reachable"] is False


def test_repeated_failures_show_the_breaker_open_and_until_when(
    staff_client: Client, configure: Any
) -> None:
    configure(URL=f"http://127.0.0.1:{free_port()}", BREAKER_FAIL_MAX=2)
    for _ in range(2):
        engine_line()

    engine = lines(staff_client)["engine"]

    assert engine["state"] == "failing"
    assert re.search(
        r"failed 2 times in a row, so calls to it are paused until \d\d:", engine["sentence"]
    )
    assert engine["details"]["breaker"] == "open"


def test_memory_switched_off_is_grey_with_nothing_to_do(
    staff_client: Client, configure: Any
) -> None:
    configure(ENABLED=False)

    found = lines(staff_client)

    for key in ("engine", "deliveries", "brain_door"):
        assert found[key]["state"] == "off"
        assert found[key]["colour"] == "grey"
        assert found[key]["what_to_do"] == ""


def test_no_engine_set_is_amber(staff_client: Client, configure: Any) -> None:
    configure(URL="")

    engine = lines(staff_client)["engine"]

    assert engine["state"] == "warning"
    assert "PIPPA_MEMORY_URL" in engine["what_to_do"]


def test_deliveries_all_through_waiting_long_and_dead(
    staff_client: Client, soul: Soul, memory_on: Any
) -> None:
    outbox_event(soul, status=OutboxEvent.Status.DELIVERED)
    assert lines(staff_client)["deliveries"]["sentence"] == "Every reply has reached it."

    outbox_event(soul, created_at=timezone.now() - timedelta(minutes=5))
    waiting = lines(staff_client)["deliveries"]
    assert waiting["state"] == "warning"
    assert "1 reply is waiting to reach it, the oldest for 5 minutes" in waiting["sentence"]
    assert waiting["details"]["pending"] == 1

    outbox_event(soul, status=OutboxEvent.Status.DEAD)
    dead = lines(staff_client)["deliveries"]
    assert dead["state"] == "failing"
    assert dead["sentence"].startswith("1 reply never reached it")
    assert "memory_outbox redrive" in dead["what_to_do"]


def test_the_brain_door_without_a_secret_or_a_model_is_amber_and_ready_is_green(
    staff_client: Client, configure: Any, offline_vessel: Vessel, memory_on: Any
) -> None:
    configure(BRAIN_SECRET="")
    no_secret = lines(staff_client)["brain_door"]
    configure(BRAIN_SECRET=BRAIN_SECRET)
    Vessel.objects.update(brain_priority=None)
    no_model = lines(staff_client)["brain_door"]
    Vessel.objects.update(brain_priority=1)
    ready = lines(staff_client)["brain_door"]

    assert no_secret["state"] == "warning"
    assert "PIPPA_MEMORY_BRAIN_SECRET" in no_secret["what_to_do"]
    assert no_model["state"] == "warning"
    assert "brain priority" in no_model["what_to_do"]
    assert ready["state"] == "ok"
    assert ready["sentence"] == f"Ready: it thinks through {offline_vessel.name}."


@pytest.mark.django_db(transaction=True)
def test_the_delivery_worker_beats_and_probes_the_engine(
    settings: Any, memory_on: Any, make_user: Callable[..., Any]
) -> None:
    settings.WEBUI = {**settings.WEBUI, "HEARTBEAT_SECONDS": 0.3}
    beat = start_delivery_heartbeat()
    try:
        deadline = time.monotonic() + 10
        while ProcessHeartbeat.objects.filter(role__in=["delivery", "engine"]).count() < 2:
            assert time.monotonic() < deadline, "the worker did not beat and reach the engine"
            time.sleep(0.05)
    finally:
        beat.stopped.set()
        beat.thread.join(timeout=5)
    client = Client()
    client.force_login(make_user("parent", is_staff=True))

    assert lines(client)["delivery"]["state"] == "ok"
