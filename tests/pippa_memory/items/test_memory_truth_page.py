"""Memory that stays true on the memory page (issue 36), against the reference engine over its
socket: a member adds a memory (the same words twice are one), corrects one (the old one is shown
under the new, replaced on the day, and leaves the next chat's block), restores it, and the page
says forgetting the newer does not bring the older back. Only who may forget a memory may correct
or restore it; a member's private memory never shows on another member's page; the member's
download says what a memory replaced."""

from html import unescape
from typing import Any

import pytest
from django.test import Client

from reference_engine.server import ReferenceEngine
from tests.support.clients import page_as
from tests.support.household_memory import add_memory, head

pytestmark = pytest.mark.django_db

LUND = "our dentist is Dr Lund"
BERG = "our dentist is now Dr Berg at the Elm Street clinic"


def page(client: Client) -> str:
    return unescape(client.get("/memory/?soul=pippa").content.decode())


def texts(engine: ReferenceEngine) -> list[str]:
    return [m.text for m in engine.state.souls["pippa"].memories]


def test_add_correct_and_restore_from_the_page(
    memory_on: ReferenceEngine, soul: Any, user: Any
) -> None:
    alice = page_as(user)
    for text in (LUND, "I like tea", "i like TEA."):
        added = alice.post("/memory/add/", {"soul": "pippa", "text": text, "scope": "household"})
        assert added.status_code == 302
    assert texts(memory_on) == [LUND, "I like tea"]  # the same words twice are one memory
    lund = next(m.id for m in memory_on.state.souls["pippa"].memories if m.text == LUND)
    pinned = head(memory_on, viewer=user)

    fixed = alice.post(f"/memory/items/{lund}/correct/", {"soul": "pippa", "text": BERG})

    assert fixed.status_code == 302
    html = page(alice)
    assert f"Replaced “{LUND}” on" in html
    assert "Restore it" in html
    assert "Forgetting the newer memory does not bring the older one back" in html
    now = head(memory_on, viewer=user)
    assert BERG in now["block"]
    assert LUND not in now["block"]
    assert LUND in pinned["block"]
    download = alice.get("/api/memory/export/?soul=pippa&format=markdown")
    body = b"".join(download.streaming_content).decode()
    assert f"replaced “{LUND}”" in body

    restored = alice.post(f"/memory/items/{lund}/restore/", {"soul": "pippa"})

    assert restored.status_code == 302
    assert LUND in head(memory_on, viewer=user)["block"]
    assert sorted(texts(memory_on)) == sorted([LUND, BERG, "I like tea"])


def test_a_private_memory_is_added_for_its_member_only(
    memory_on: ReferenceEngine, soul: Any, user: Any, make_user: Any
) -> None:
    bob = make_user("bob")
    page_as(user).post("/memory/add/", {"soul": "pippa", "text": LUND, "scope": "private"})

    assert LUND in page(page_as(user))
    assert LUND not in page(page_as(bob))
    assert LUND not in head(memory_on, viewer=bob)["block"]


def test_only_who_may_forget_a_memory_may_correct_or_restore_it(
    memory_on: ReferenceEngine, soul: Any, user: Any, make_user: Any
) -> None:
    bob = make_user("bob")
    bobs = add_memory(memory_on, LUND, by=bob)
    secret = add_memory(memory_on, "Bob's surprise is on Friday.", scope="private", by=bob)
    alice = page_as(user)

    other = alice.post(f"/memory/items/{bobs}/correct/", {"soul": "pippa", "text": BERG})
    private = alice.post(f"/memory/items/{secret}/correct/", {"soul": "pippa", "text": "x"})
    restore = alice.post(f"/memory/items/{bobs}/restore/", {"soul": "pippa"})

    assert other.status_code == 403
    assert private.status_code == 404
    assert restore.status_code == 403
    assert texts(memory_on) == [LUND, "Bob's surprise is on Friday."]
    assert "Correct…" not in page(alice)  # nothing of Bob's to correct


def test_bad_words_are_refused_and_change_nothing(
    memory_on: ReferenceEngine, soul: Any, user: Any
) -> None:
    mine = add_memory(memory_on, LUND, by=user)
    alice = page_as(user)
    before = head(memory_on, viewer=user)["revision"]

    empty = alice.post("/memory/add/", {"soul": "pippa", "text": "  ", "scope": "household"})
    long = alice.post("/memory/add/", {"soul": "pippa", "text": "x" * 2001, "scope": "household"})
    scope = alice.post("/memory/add/", {"soul": "pippa", "text": "tea", "scope": "everyone"})
    same = alice.post(
        f"/memory/items/{mine}/correct/", {"soul": "pippa", "text": "Our dentist is Dr Lund."}
    )

    for answer in (empty, long, scope, same):
        assert answer.status_code == 302
    html = page(alice)
    assert "Nothing was added. Write the memory in words." in html
    assert "Nothing was added. Choose private or household." in html
    assert "Nothing was corrected." in html
    assert head(memory_on, viewer=user)["revision"] == before
    assert texts(memory_on) == [LUND]
