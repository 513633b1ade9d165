"""The engine thinks through the site's brain door, over real sockets: the engine as the Procfile
runs it (``python -m reference_engine``) calls the site under the Procfile's gunicorn, signed as the
door checks. An ask is answered by the door (an audit row on the site, the answer stored for the
next turn), from only the memories its viewer may see; a failing vessel is said plainly; a brief
is curated by the door, or is the recent household memories marked as a fallback; an ask left
pending by a killed engine is answered after the restart.
"""

import json
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pippa_memory.models import BrainCall
from reference_engine.storage.database import Database
from tests.reliability.test_brain_door_crash import (  # noqa: F401 - fixtures used by name
    ROOT,
    SilentProvider,
    gunicorn,
    silent_provider,
)
from tests.support.brain_door import NEW_SECRET
from tests.support.engine_calls import ALICE, BOB, call, send, turn_event
from tests.support.engine_processes import engine_process, kill, start_engine, wait_until_answering
from tests.support.live_servers import free_port
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db(transaction=True)

KITCHEN = "The bins go out on Tuesday night."
ALICE_OWN = "Alice puts the bins out early when it rains."
BOB_OWN = "Bob's secret: the bins go out late on purpose."


def household(adapter: str = "offline", **fields: Any) -> None:
    """The site's soul, and one vessel that may serve the brain door."""
    Soul.objects.create(slug="pippa", name="Pippa", vault_path=str(ROOT / "demo/vaults/pippa"))
    Vessel.objects.create(slug="brain", name="Brain", adapter=adapter, brain_priority=1, **fields)


def remember_three(url: str) -> None:
    """A household memory, one private to Alice and one private to Bob, all about the bins."""
    for text, viewer, scope in ((KITCHEN, ALICE, "household"), (ALICE_OWN, ALICE, "private")):
        assert send(url, turn_event(text, viewer, scope=scope)).status_code == 202
    assert send(url, turn_event(BOB_OWN, BOB, scope="private")).status_code == 202


def ask(url: str, question: str, viewer: str | None = "7") -> tuple[str, str]:
    """Ask ``question`` in a new conversation; its id and the ask's."""
    conversation = f"conv-{uuid.uuid4().hex[:8]}"
    body = {"soul": "pippa", "conversation": conversation, "viewer": viewer, "question": question}
    taken = call(url, "POST", "/v1/asks", json=body)
    assert taken.status_code == 202, taken.text
    return conversation, taken.json()["ask_id"]


def answer_to(url: str, conversation: str, *, within: float = 60) -> dict[str, Any]:
    """The conversation's first answer, once the engine has written one."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = call(url, "GET", f"/v1/conversations/{conversation}/answers").json()["answers"]
        if found:
            return found[0]
        time.sleep(0.2)
    pytest.fail(f"no answer within {within} s")


def door_row(ask_id: str) -> BrainCall:
    return BrainCall.objects.get(webhook_id__startswith=f"engine_{ask_id}_")


def brain_options(site: str, *more: str) -> tuple[str, ...]:
    return ("--brain-url", site, "--brain-secret", NEW_SECRET, "--answer-delay", "0", *more)


def test_an_ask_is_answered_through_the_door_from_what_its_viewer_may_see(
    engine_database: str,
    gunicorn: tuple[str, Any],  # noqa: F811
) -> None:
    household()
    with engine_process(engine_database, *brain_options(gunicorn[0])) as (url, _):
        remember_three(url)
        conversation, ask_id = ask(url, "when do the bins go out?")
        answer = answer_to(url, conversation)

    row = door_row(ask_id)
    reply = json.loads(row.response_body)
    assert (row.role, row.outcome, row.vessel) == ("assemble", "answered", "brain")
    assert answer["answer"] == reply["output"]["block"]  # the door's answer, stored as it came
    assert reply["synthetic"] is True  # the offline vessel: the facts in order, nobody weighed
    assert KITCHEN in answer["answer"]
    assert ALICE_OWN in answer["answer"]
    assert BOB_OWN not in answer["answer"]  # Bob's private memory never reached the door


def test_an_ask_through_a_failing_vessel_says_plainly_it_was_not_worked_out(
    engine_database: str,
    gunicorn: tuple[str, Any],  # noqa: F811
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: the vessel fails
    household("openai_compatible", model="local", base_url=closed)
    with engine_process(engine_database, *brain_options(gunicorn[0])) as (url, _):
        remember_three(url)
        conversation, ask_id = ask(url, "when do the bins go out?")
        answer = answer_to(url, conversation)["answer"]

    assert door_row(ask_id).outcome == BrainCall.Outcome.VESSEL_FAILED
    assert answer.startswith("Pippa could not work that out: the brain door answered 502")
    said, _, quoted = answer.partition(" The memories that match the question: ")
    assert sorted(quoted.split("; ")) == sorted([KITCHEN, ALICE_OWN])  # never Bob's


def test_a_brief_is_curated_through_the_door_from_household_memories_only(
    engine_database: str,
    gunicorn: tuple[str, Any],  # noqa: F811
) -> None:
    household()
    with engine_process(engine_database, *brain_options(gunicorn[0])) as (url, _):
        remember_three(url)
        brief = call(url, "POST", "/v1/wakes/brief", json={"soul": "pippa"}).json()

    row = BrainCall.objects.get(role="assemble")
    assert row.outcome == BrainCall.Outcome.ANSWERED
    assert brief["brief"] == json.loads(row.response_body)["output"]["block"] == f"- {KITCHEN}"
    assert (brief["fallback"], brief["viewer"], len(brief["items"])) == (None, None, 1)


def test_a_brief_without_a_door_is_the_recent_household_memories_marked_as_a_fallback(
    engine_database: str,
) -> None:
    with engine_process(engine_database) as (url, _):
        remember_three(url)
        brief = call(url, "POST", "/v1/wakes/brief", json={"soul": "pippa"}).json()
        conversation, _ = ask(url, "when do the bins go out?")
        answer = answer_to(url, conversation)["answer"]

    assert brief["fallback"] == {"reason": "no brain door is configured"}
    assert brief["brief"] == (
        "Recent household memories for this wake (a fallback: they were not curated, because "
        f"no brain door is configured).\nWhat I remember:\n- {KITCHEN}"
    )
    assert len(brief["items"]) == 1
    assert answer.startswith("Pippa could not work that out: no brain door is configured.")


def test_an_ask_pending_when_the_engine_is_killed_is_answered_through_the_door_after_restart(
    engine_database: str,
    gunicorn: tuple[str, Any],  # noqa: F811
    silent_provider: SilentProvider,  # noqa: F811
) -> None:
    household()
    hung_door = f"http://127.0.0.1:{silent_provider.port}"  # takes the call, never answers
    with engine_process(engine_database, *brain_options(hung_door, "--brain-timeout", "120")) as (
        url,
        process,
    ):
        remember_three(url)
        conversation, ask_id = ask(url, "when do the bins go out?")
        assert silent_provider.called.wait(30), "the engine never called the door"
        kill(process)  # mid-call: the ask is a row with no answer

    port = free_port()
    restarted = start_engine(engine_database, port, *brain_options(gunicorn[0]))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(restarted, url)
        answer = answer_to(url, conversation)["answer"]
    finally:
        kill(restarted)

    assert answer == json.loads(door_row(ask_id).response_body)["output"]["block"]
    assert KITCHEN in answer


def test_sigterm_during_a_brain_call_finishes_it_and_the_requests_in_flight_then_stops_saying_so(
    engine_database: str,
    silent_provider: SilentProvider,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The engine as the Procfile runs it, stopped as honcho or a supervisor stops it (SIGTERM to
    gunicorn) while its thinker waits on the door: a request in flight is answered, the call
    under way ends (here by its deadline) and its answer is written, the next ask is left for the
    next start, and the log says each step."""
    hung_door = f"http://127.0.0.1:{silent_provider.port}"  # takes the call, never answers
    port, log = free_port(), (tmp_path / "engine.log").open("w")
    options = brain_options(hung_door, "--brain-timeout", "4", "--control")
    engine = start_engine(engine_database, port, *options, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(engine, url)
        remember_three(url)
        _, first_id = ask(url, "when do the bins go out?")
        assert silent_provider.called.wait(30), "the engine never called the door"
        _, second_id = ask(url, "who puts the bins out?")
        slow = {"mode": "latency", "seconds": 2, "paths": ["/v1/souls/pippa/head"]}
        assert call(url, "POST", "/_control/faults", json=slow).status_code == 200
        in_flight: dict[str, int] = {}
        request = threading.Thread(
            target=lambda: in_flight.update(
                status=call(url, "GET", "/v1/souls/pippa/head").status_code
            )
        )
        request.start()
        time.sleep(0.5)  # the request is being answered, the door call is under way
        engine.send_signal(signal.SIGTERM)
        request.join(timeout=30)
        assert engine.wait(timeout=60) == 0
    finally:
        kill(engine)
        log.close()
    said = (tmp_path / "engine.log").read_text()
    database = Database(engine_database)
    with database.read() as cursor:
        answers = dict(cursor.run("SELECT id, answer FROM engine_asks").all())
    database.close()

    assert in_flight == {"status": 200}
    assert answers[first_id].startswith(
        "Pippa could not work that out: the brain door did not answer within 4 s."
    )
    assert answers[second_id] is None  # stopped between asks: asked at the next start
    assert "Stopping (signal 15): taking no new requests" in said
    assert "The thinker stopped between asks; closing the database" in said
    assert (
        said.index("Stopping (signal 15)") < said.index("thinker stopped") < said.index("Stopped")
    )
