"""Run with ``--ds=tests.settings_host_only``: the host works with ``pippa_memory`` uninstalled.

``make test`` runs this folder together with ``tests/webui`` under those settings, in a copy of the
tree without the ``pippa_memory/`` and ``reference_engine/`` folders, so the whole host suite passes
without the plug-in; these tests pin down that the plug-in really is absent.
"""

import importlib
import pkgutil
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from rest_framework.test import APIClient

import webui
from webui.extensions import registered_extensions
from webui.models import Conversation


def test_the_plugin_is_not_installed() -> None:
    assert not apps.is_installed("pippa_memory")
    assert all(type(e).__module__.split(".")[0] != "pippa_memory" for e in registered_extensions())


@pytest.mark.parametrize("absent", ["pippa_memory", "reference_engine"])
def test_the_plugin_and_the_engine_cannot_be_imported(absent: str) -> None:
    """As if their folders were absent from the tree (``tests/settings_host_only.py``)."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{absent}.conf" if absent == "pippa_memory" else absent)


def test_every_module_of_the_host_imports_without_them() -> None:
    names = [m.name for m in pkgutil.walk_packages(webui.__path__, "webui.")]
    for name in names:
        importlib.import_module(name)
    assert len(names) > 100  # the whole host was walked


@pytest.mark.django_db
def test_system_checks_pass_without_the_plugin() -> None:
    call_command("check", fail_level="ERROR")


@pytest.mark.django_db
def test_chat_works_and_offers_no_tool(auth_client: APIClient, conversation: Conversation) -> None:
    response = auth_client.post(
        f"/api/conversations/{conversation.id}/messages/",
        {"text": "remember I like tea"},
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["assistant"]["tool_uses"] == []
    assert "no memory tool" in response.json()["assistant"]["content"]
    conversation.refresh_from_db()
    assert conversation.offered_tools == []


@pytest.mark.django_db
def test_the_conversation_page_is_whole_without_a_memory_panel(
    auth_client: APIClient, conversation: Conversation
) -> None:
    """The page's panel slot is empty with the plug-in removed: no panel, no link to its API."""
    response = auth_client.get(f"/conversations/{conversation.id}/")

    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="send"' in html
    assert "memory-panel" not in html
    assert "/api/memory/" not in html


@pytest.fixture(autouse=True)
def _require_host_only_settings(settings: Any) -> None:
    if settings.SETTINGS_MODULE != "tests.settings_host_only":
        pytest.fail("tests/host_only runs with --ds=tests.settings_host_only (see the Makefile)")
