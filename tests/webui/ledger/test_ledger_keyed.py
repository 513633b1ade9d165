"""The ledger's section hashes are keyed with a secret of the site's: a staff account that reads
``/api/ledger/`` cannot check a guessed prompt against them offline, while equal bytes still hash
equal (drift found as before); rows from before keyed hashing are keyed in place by their
migration and the next call still compares with them exactly; after a ``SECRET_KEY`` rotation the
old key, kept as a fallback, still compares, and a key gone altogether claims no drift."""

import hashlib
import importlib
import logging
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.utils.crypto import salted_hmac

from provider_doubles import strip_cache_markers, strip_slot
from webui.ledger import recorder
from webui.models import Conversation, Message, VesselCall
from webui.text.canonical import canonical_bytes
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

GUESS = "my pin is 4921"


def keyed(data: bytes, secret: str | None = None) -> str:
    """HMAC-SHA256 under the key ``salted_hmac`` derives for the ledger (docs/ledger.md)."""
    secret = secret or settings.SECRET_KEY
    return salted_hmac("webui.ledger.section", data, secret=secret, algorithm="sha256").hexdigest()


def plain(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def turn_bytes(request: dict[str, Any]) -> bytes:
    """The ``turn`` section's bytes of the offline vessel's first request: its one user message
    (no history yet), as the ledger reads it (slot and cache markers left out)."""
    messages, _ = strip_slot(strip_cache_markers(request)["messages"])
    return b"[" + b",".join(canonical_bytes(m) for m in messages) + b"]"


def ledger_as_staff(make_user: Any, conversation: Conversation) -> list[dict[str, Any]]:
    staff = make_user("keeper", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename="view_vesselcall"))
    client = Client()
    client.force_login(staff)
    answer = client.get("/api/ledger/", {"conversation": str(conversation.pk)})
    assert answer.status_code == 200
    return answer.json()


def test_a_guessed_prompt_cannot_be_checked_against_the_ledger_without_the_sites_secret(
    conversation: Conversation, make_user: Any, sent_requests: list[Any]
) -> None:
    run_turn(conversation=conversation, text=GUESS)

    [row] = ledger_as_staff(make_user, conversation)
    hashes = set(row["sections"].values())
    guessed = turn_bytes(sent_requests[0])
    system = sent_requests[0]["system"]
    vault = (system if isinstance(system, str) else system[0]["text"]).encode()

    assert GUESS.encode() in guessed  # the right guess, built as the ledger builds it
    assert plain(guessed) not in hashes
    assert not {plain(vault), plain(vault.split(b"\n\n")[0]), plain(b"")} & hashes
    assert row["sections"]["turn"] == keyed(guessed)
    assert row["sections"]["turn"] != keyed(guessed, secret="another site's secret")


def plain_hasher() -> Any:
    """The hashes rows held before they were keyed: plain sha256, no key named."""

    class Plain:
        key_id = ""

        def __call__(self, data: bytes) -> str:
            return plain(data)

    return Plain()


def test_rows_from_before_are_keyed_by_their_migration_and_the_next_call_compares_exactly(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(recorder, "site_hasher", plain_hasher)
        run_turn(conversation=conversation, text="hello")
    [old] = VesselCall.objects.filter(conversation=conversation)
    plain_hashes = dict(old.sections)
    migration = importlib.import_module("webui.migrations.0011_vessel_call_keyed_section_hashes")

    migration.key_plain_hashes(apps, connection.schema_editor())
    run_turn(conversation=conversation, text="again")

    old.refresh_from_db()
    assert old.sections_key.startswith("sha256/")
    assert old.sections == {name: keyed(h.encode()) for name, h in plain_hashes.items()}
    assert not set(plain_hashes.values()) & set(old.sections.values())
    newest = VesselCall.objects.filter(conversation=conversation).order_by("id").last()
    assert (newest.drift_section, newest.drift_cause) == ("", "")
    assert not newest.sections_key.startswith("sha256/")


def rewrite_history(conversation: Conversation) -> None:
    """An edit of a kept message: the next call's history no longer starts as the last one's."""
    said = Message.objects.filter(conversation=conversation, role="user").first()
    said.content = "something else"
    said.save()


def test_after_a_key_rotation_the_old_key_as_a_fallback_still_finds_drift(
    conversation: Conversation, settings: Any
) -> None:
    run_turn(conversation=conversation, text="hello")
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-rotated-secret-key-" + "x" * 40
    rewrite_history(conversation)

    run_turn(conversation=conversation, text="again")

    newest = VesselCall.objects.filter(conversation=conversation).order_by("id").last()
    assert newest.drift_section == "history"


def test_a_key_the_site_no_longer_holds_claims_no_drift_and_says_so(
    conversation: Conversation, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    run_turn(conversation=conversation, text="hello")
    settings.SECRET_KEY = "a-rotated-secret-key-" + "x" * 40
    rewrite_history(conversation)

    with caplog.at_level(logging.INFO, logger="webui.ledger.recorder"):
        run_turn(conversation=conversation, text="again")
        run_turn(conversation=conversation, text="and again")

    calls = list(VesselCall.objects.filter(conversation=conversation).order_by("id"))
    assert [c.drift_section for c in calls] == ["", "", ""]
    assert calls[1].sections_key == calls[2].sections_key != calls[0].sections_key
    assert "starts the chain afresh" in caplog.text
