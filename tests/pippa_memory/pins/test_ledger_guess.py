"""A guessed private memory cannot be checked against ``/api/ledger/`` without the site's secret:
staff holding only ``view_vesselcall`` read the memory section's hash of a member's turn, and
the plain sha256 of the exact block the vessel was sent (the right guess, envelope and all)
matches nothing there, while the HMAC under the site's secret matches it. Against the reference
engine over a socket."""

import hashlib
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils.crypto import salted_hmac

from pippa_memory.pins import turn_block
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import add_memory
from webui.ledger.section_hash import PURPOSE
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

PRIVATE = "Alice's bank PIN is 4921."


def keyed(data: bytes, secret: str) -> str:
    return salted_hmac(PURPOSE, data, secret=secret, algorithm="sha256").hexdigest()


def test_a_guessed_private_memory_cannot_be_checked_against_the_ledger_without_the_secret(
    memory_on: ReferenceEngine, user: Any, make_user: Any, make_conversation: Any,
    sent_requests: list[Any],
) -> None:  # fmt: skip
    add_memory(memory_on, PRIVATE, scope="private", by=user)
    talk = make_conversation(viewer=user)
    run_turn(conversation=talk, text="hello")
    block = turn_block.pinned_block(Conversation.objects.get(pk=talk.pk))
    assert PRIVATE in block
    assert block in sent_requests[-1]["system"]
    staff = make_user("keeper", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename="view_vesselcall"))
    client = Client()
    client.force_login(staff)

    [row] = client.get("/api/ledger/", {"conversation": str(talk.pk)}).json()

    guess = block.encode("utf-8")
    hashes = set(row["sections"].values())
    assert hashlib.sha256(guess).hexdigest() not in hashes
    assert PRIVATE not in str(row)
    assert row["sections"]["memory"] == keyed(guess, settings.SECRET_KEY)
    assert row["sections"]["memory"] != keyed(guess, "another site's secret")
