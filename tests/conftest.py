"""Shared factory fixtures for the whole suite (in the style of allauth's conftest)."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from tests.support.engine_token import TOKEN
from tests.support.factory_defaults import DEMO_VAULT, PASSWORD
from tests.support.live_servers import RequestsInFlight
from tests.support.production_site import DOOR_SECRET, production_server
from tests.support.silent_provider import SilentProvider
from webui.extensions import TurnExtension, register_extension, unregister_extension
from webui.models import Conversation, Soul, Vessel

if TYPE_CHECKING:
    from reference_engine.server import ReferenceEngine

FIXED_NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


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


# -- The memory plug-in and the reference engine, for its tests and the site-wide ones (browser,
# reliability). Imported inside the fixtures: under ``tests.settings_host_only`` neither package
# can be imported, and no host test asks for these.


@pytest.fixture
def engine() -> Iterator["ReferenceEngine"]:
    """The reference engine on a free loopback port, in a background thread: its own fresh
    SQLite database (a temporary file), and the control door open."""
    from reference_engine.server import ReferenceEngine

    running = ReferenceEngine(token=TOKEN, answer_delay=0.0, control=True).start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _live_server_settles(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on the live server ends only when the server has finished what its page asked:
    the page closes first (its fixture was made after this one), then the in-flight requests
    finish, and only then is the test database flushed under them."""
    if "live_server" not in request.fixturenames:
        yield
        return
    with RequestsInFlight().watched() as in_flight:
        yield
        in_flight.settle(timeout=30)


@pytest.fixture(autouse=True)
def _fresh_breaker() -> Iterator[None]:
    """Wherever the plug-in is installed: a fresh breaker, and no rendered blocks or logged
    revision conflicts remembered from another test's database rows."""
    if not apps.is_installed("pippa_memory"):
        yield
        return
    from pippa_memory.engine.client import BREAKER
    from pippa_memory.pins.blocks import REPORTED_CONFLICTS
    from pippa_memory.pins.turn_block import RENDERED

    BREAKER.reset()
    RENDERED.clear()
    REPORTED_CONFLICTS.clear()
    yield
    BREAKER.reset()
    RENDERED.clear()
    REPORTED_CONFLICTS.clear()


@pytest.fixture
def memory_settings(settings: Any) -> dict[str, Any]:
    """The PIPPA_MEMORY dict for this test, with short budgets; change it through ``configure``."""
    settings.PIPPA_MEMORY = {
        **settings.PIPPA_MEMORY,
        "ENABLED": True,
        "URL": "",
        "TOKEN": TOKEN,
        "CONNECT_TIMEOUT": 0.5,
        "READ_TIMEOUT": 0.5,
        "CHAT_BUDGET": 0.5,
        "BREAKER_FAIL_MAX": 3,
        "BREAKER_RESET_TIMEOUT": 30.0,
        # No rings leave the suite unless a test listens for them on a port of its own.
        "OUTBOX_WAKE_ADDRESS": "",
    }
    return settings.PIPPA_MEMORY


@pytest.fixture
def configure(settings: Any, memory_settings: dict[str, Any]) -> Any:
    def change(**values: Any) -> None:
        settings.PIPPA_MEMORY = {**settings.PIPPA_MEMORY, **values}

    return change


@pytest.fixture
def memory_on(engine: "ReferenceEngine", configure: Any) -> "ReferenceEngine":
    """Memory on, pointed at the reference engine."""
    configure(URL=engine.url)
    return engine


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """The per-turn slot's clock, frozen so two prompts can be compared byte for byte."""
    monkeypatch.setattr("webui.prompt.assembly.timezone.now", lambda: FIXED_NOW)
    return FIXED_NOW
