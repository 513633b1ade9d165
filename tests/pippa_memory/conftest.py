"""Fixtures for the memory plug-in's tests (the reference engine and memory's settings are in
``tests/conftest.py``, shared with the browser and reliability tests)."""

from typing import Any

import pytest

from pippa_memory.models import BrainCall, MemoryBlock, PinRecord
from provider_doubles import ALL_KITS, Kit, kit_vessel
from tests.support.access_walk import make_role_users
from tests.support.brain_door import BRAIN_SECRET
from tests.support.household_memory import add_memory
from tests.support.plugin_world import PluginWorld, outbox_event
from tests.support.scheduled_jobs import hourly_job
from webui.models import Conversation, ScheduledJob, Soul, Vessel


@pytest.fixture
def bob(make_user: Any) -> Any:
    """A second member of the household, beside ``user`` (Alice)."""
    return make_user("bob")


@pytest.fixture
def world(
    make_user: Any, make_conversation: Any, soul: Soul, configure: Any, memory_on: Any
) -> PluginWorld:
    """Each role's account, a neighbour's memories for them to try, a member who leaves, and one
    of each record the plug-in's admin pages show (the access walk's and the admin links')."""
    configure(BRAIN_SECRET=BRAIN_SECRET)
    users = make_role_users(make_user)
    neighbour, leaver = make_user("neighbour"), make_user("leaver")
    memories = {
        key: add_memory(memory_on, f"The neighbour's {key} memory.", by=neighbour)
        for key in (
            "page_forget",
            "page_scope",
            "page_keep",
            "page_correct",
            "page_restore",
            "api_forget",
            "api_correct",
            "api_restore",
        )
    }
    add_memory(memory_on, "The leaver's note.", scope="private", by=leaver)
    conversation = make_conversation(viewer=users["member"], title="A member's private title")
    return PluginWorld(
        users=users,
        conversation=conversation,
        pin=PinRecord.objects.create(
            conversation=conversation, soul=soul, outcome="absent", reason="engine down"
        ),
        block=MemoryBlock.objects.create(soul=soul, revision="r1", text="Tea.", sha256="0" * 64),
        event=outbox_event(soul, conversation),
        call=BrainCall.objects.create(request_id="req-walk", outcome="answered"),
        memories=memories,
        leaver=leaver,
    )


@pytest.fixture
def job(soul: Soul, offline_vessel: Vessel) -> ScheduledJob:
    """The soul's morning note, an hourly job due now."""
    return hourly_job(soul, offline_vessel)


@pytest.fixture(params=ALL_KITS, ids=lambda kit_class: kit_class.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    """Each provider's double in turn, the offline vessel's included."""
    return request.param()


@pytest.fixture
def kit_conversation(
    kit: Kit, soul: Soul, user: Any, monkeypatch: pytest.MonkeyPatch
) -> Conversation:
    """Alice's conversation on a vessel of ``kit``'s adapter."""
    return Conversation.objects.create(soul=soul, vessel=kit_vessel(kit, monkeypatch), viewer=user)
