"""Host tests see only the extensions they register themselves, whatever plug-ins are installed."""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import responses

from provider_doubles import ALL_KITS, Kit, kit_vessel
from tests.support.host_world import HostWorld, host_world
from tests.support.recording_tool import RecordingTool
from tests.support.vessel_contract import Provider
from webui import extensions
from webui.extensions import TurnExtension
from webui.models import Conversation, Soul, Vessel


@pytest.fixture(autouse=True)
def _isolated_extensions() -> Iterator[None]:
    saved = extensions.registered_extensions()
    extensions._registered.clear()
    yield
    extensions._registered[:] = saved


@pytest.fixture
def recording_tool(extension: Callable[[TurnExtension], TurnExtension]) -> RecordingTool:
    return extension(RecordingTool())


@pytest.fixture
def saved_replies() -> Iterator[list[Any]]:
    """Every assistant row created while the test runs, as the turn event's ``post_save`` sees
    it (from any thread: a live server's too)."""
    from django.db.models.signals import post_save

    from webui.models import Message

    saved: list[Any] = []

    def record(sender: type, instance: Any, created: bool, **kwargs: Any) -> None:
        if created and instance.role == Message.Role.ASSISTANT:
            saved.append(instance)

    post_save.connect(record, sender=Message, dispatch_uid="tests.saved_replies")
    yield saved
    post_save.disconnect(sender=Message, dispatch_uid="tests.saved_replies")


# The vessel contract's fixtures (tests/webui/vessels/test_vessel_contract.py), which the ledger's
# tests run their turns on too: each test runs once per kit, on all seven adapters.
@pytest.fixture(params=ALL_KITS, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


@pytest.fixture
def vessel(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> Vessel:
    return kit_vessel(kit, monkeypatch, slug=kit.adapter.replace("_", "-"))


@pytest.fixture
def provider(kit: Kit, request: pytest.FixtureRequest) -> Iterator[Provider]:
    """The kit's provider mocked with its documented payloads; the offline vessel answers itself
    and its requests are recorded as it is handed them."""
    if kit.adapter == "offline":
        yield Provider(kit, None, request.getfixturevalue("sent_requests"))
        return
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        kit.serve(rsps)
        yield Provider(kit, rsps, [])


@pytest.fixture
def chat(soul: Soul, vessel: Vessel, user: Any, recording_tool: Any) -> Conversation:
    return Conversation.objects.create(soul=soul, vessel=vessel, viewer=user)


@pytest.fixture
def world(make_user: Any, make_conversation: Any, soul: Soul, offline_vessel: Vessel) -> HostWorld:
    """One of everything the host's routes and admin pages point at (the access walk's world)."""
    return host_world(make_user, make_conversation, soul, offline_vessel)
