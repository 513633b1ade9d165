"""Shared factory fixtures for the whole suite (in the style of allauth's conftest)."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from tests.support.factory_defaults import DEMO_VAULT, PASSWORD
from tests.support.production_site import DOOR_SECRET, production_server
from tests.support.silent_provider import SilentProvider
from webui.extensions import TurnExtension, register_extension, unregister_extension
from webui.models import Conversation, Soul, Vessel


@pytest.fixture
def make_user(db: None) -> Callable[..., Any]:
    def make(username: str = "alice", **fields: Any) -> Any:
        fields.setdefault("first_name", username.title())
        return get_user_model().objects.create_user(username=username, password=PASSWORD, **fields)

    return make


@pytest.fixture
def user(make_user: Callable[..., Any]) -> Any:
    return make_user("alice")


@pytest.fixture
def auth_client(user: Any) -> APIClient:
    """An API client logged in as ``user``, with CSRF checks enforced as a browser would meet them."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/accounts/login/")  # sets the CSRF cookie
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client


@pytest.fixture
def staff_client(make_user: Callable[..., Any]) -> Client:
    """A client logged in as "parent", a staff account holding no permission."""
    client = Client()
    client.force_login(make_user("parent", is_staff=True))
    return client


@pytest.fixture
def soul(db: None) -> Soul:
    return Soul.objects.create(slug="pippa", name="Pippa", vault_path=DEMO_VAULT)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """An empty vault folder to write notes into."""
    folder = tmp_path / "vault"
    folder.mkdir()
    return folder


@pytest.fixture
def offline_vessel(db: None) -> Vessel:
    return Vessel.objects.create(
        slug="offline", name="Offline", adapter=Vessel.Adapter.OFFLINE, model="offline-1"
    )


@pytest.fixture
def make_conversation(soul: Soul, offline_vessel: Vessel, user: Any) -> Callable[..., Conversation]:
    def make(**fields: Any) -> Conversation:
        fields.setdefault("soul", soul)
        fields.setdefault("vessel", offline_vessel)
        fields.setdefault("viewer", user)
        return Conversation.objects.create(**fields)

    return make


@pytest.fixture
def conversation(make_conversation: Callable[..., Conversation]) -> Conversation:
    return make_conversation()


@pytest.fixture
def extension() -> Iterator[Callable[[TurnExtension], TurnExtension]]:
    """Register test extensions for one test and remove them afterwards."""
    added: list[type[TurnExtension]] = []

    def add(instance: TurnExtension) -> TurnExtension:
        register_extension(instance)
        added.append(type(instance))
        return instance

    yield add
    for extension_class in added:
        unregister_extension(extension_class)


@pytest.fixture
def sent_requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every request body the offline vessel is handed, in order."""
    from webui.vessels.offline import OfflineAdapter

    captured: list[dict[str, Any]] = []
    original = OfflineAdapter.send

    def send(self: OfflineAdapter, request: dict[str, Any]) -> Any:
        captured.append(request)
        return original(self, request)

    monkeypatch.setattr(OfflineAdapter, "send", send)
    return captured


@pytest.fixture
def brain_door_gunicorn(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """The Procfile's web command under the production profile with the brain door open (its
    secret :data:`DOOR_SECRET`); its URL and its gunicorn master's process."""
    settings = {"PIPPA_MEMORY_BRAIN_SECRET": DOOR_SECRET, "PIPPA_MEMORY_BRAIN_RATE": "1000/min"}
    with production_server(tmp_path, collect_static=False, **settings) as started:
        yield started


@pytest.fixture
def silent_provider() -> Iterator[SilentProvider]:
    """A provider on loopback that takes calls and never answers them."""
    provider = SilentProvider()
    provider.start()
    yield provider
    provider.close()
