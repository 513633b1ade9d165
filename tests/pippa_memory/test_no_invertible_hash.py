"""No hash staff can invert (issue 35, point 2): the adversary's brute force, and what it finds.

Alice keeps a private memory "my PIN is 249814"; her conversation pins a block holding it, its
turn event quotes it, and the brain door is asked about it. Carol, staff with every ``view_*``
permission of the site and the plug-in and nothing else, reads every admin page about them (lists
and change pages: stored blocks, pin records, conversation pins, outbox events, brain calls) and
tries all a million six-digit PINs against every hash she sees there, rebuilding each text around
the guess exactly as it was hashed. She finds nothing: each hash is keyed with the site's secret
(:mod:`pippa_memory.member_text_hash`). The same pages would give the PIN away if a plain sha256
were shown (the reconstruction is checked to be exact). She does not see the item ids of Alice's
block either, without the permission made for it.
"""

import base64
import hashlib
import json
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from standardwebhooks import Webhook

from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import BrainCall, MemoryBlock, OutboxEvent
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import add_memory
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

PIN = "249814"
PRIVATE = f"my PIN is {PIN}"
SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
ADMIN_MODELS = ["memoryblock", "pinrecord", "conversationpin", "outboxevent", "braincall"]


def view_only_staff(make_user: Any, *more: str) -> Any:
    """Carol: staff holding every ``view_*`` permission (and ``more``), nothing else."""
    carol = make_user("carol", is_staff=True)
    views = Permission.objects.filter(codename__startswith="view_").exclude(
        codename="view_member_item_ids"
    )
    carol.user_permissions.add(*views, *Permission.objects.filter(codename__in=more))
    return type(carol).objects.get(pk=carol.pk)


def ask_the_door(item: str, viewer: str) -> bytes:
    """A signed brain-door call about Alice's memory, as the engine makes one; its body."""
    facts = [{"id": item, "text": PRIVATE}]
    body = {"role": "assemble", "soul": "pippa", "viewer": viewer,
            "input": {"purpose": "What is my PIN?", "facts": facts, "budget_chars": 200}}  # fmt: skip
    raw = json.dumps(body, sort_keys=True).encode()
    msg_id, now = f"msg_{uuid.uuid4().hex}", datetime.now(UTC)
    headers = {
        "HTTP_WEBHOOK_ID": msg_id,
        "HTTP_WEBHOOK_TIMESTAMP": str(int(now.timestamp())),
        "HTTP_WEBHOOK_SIGNATURE": Webhook(SECRET).sign(msg_id, now, raw.decode()),
    }
    answer = Client().post("/api/memory/brain/", raw, content_type="application/json", **headers)
    assert answer.status_code == 200, answer.content
    return raw


def admin_pages(staff: Any) -> str:
    """Every admin list and change page of the plug-in's records, as staff sees them."""
    client = Client()
    client.force_login(staff)
    seen = []
    for name in ADMIN_MODELS:
        listing = client.get(f"/admin/pippa_memory/{name}/")
        assert listing.status_code == 200, name
        seen.append(listing.content.decode())
        for link in set(re.findall(rf"/admin/pippa_memory/{name}/([^/\"]+)/change/", seen[-1])):
            page = client.get(f"/admin/pippa_memory/{name}/{link}/change/")
            assert page.status_code == 200, (name, link)
            seen.append(page.content.decode())
    return "\n".join(seen)


def shown_prefixes(html: str) -> set[str]:
    """The first 12 hex digits of every hash on the pages (pin records show no more than that)."""
    return {run[:12] for run in re.findall(r"[0-9a-f]{12,}", html)}


def brute_force(templates: list[str], shown: set[str]) -> list[str]:
    """Every six-digit PIN whose text, rebuilt in any of ``templates``, hashes (plain sha256) to
    something shown."""
    rebuilt = []
    for template in templates:
        first, *rest = template.split(PIN)
        rebuilt.append((hashlib.sha256(first.encode()), rest))
    found = []
    for number in range(1_000_000):
        guess = f"{number:06d}"
        for head, rest in rebuilt:
            hashed = head.copy()
            hashed.update((guess + guess.join(rest)).encode())
            if hashed.hexdigest()[:12] in shown:
                found.append(guess)
    return found


def test_a_view_only_staff_member_cannot_brute_force_a_private_pin_from_the_admin(
    memory_on: ReferenceEngine, configure: Any, user: Any, make_user: Any,
    conversation: Conversation, offline_vessel: Any,
) -> None:  # fmt: skip
    configure(BRAIN_SECRET=SECRET, BRAIN_RATE="1000/min")
    offline_vessel.brain_priority = 1
    offline_vessel.save(update_fields=["brain_priority"])
    item = add_memory(memory_on, PRIVATE, scope="private", by=user)
    add_memory(memory_on, "The bins go out on Tuesday.", scope="household", by=user)
    run_turn(conversation=conversation, text="recall my PIN")
    body = ask_the_door(item, str(user.pk))
    carol = view_only_staff(make_user)

    html = admin_pages(carol)
    started = time.monotonic()
    block = MemoryBlock.objects.get(viewer=str(user.pk)).text
    payload = json.dumps(OutboxEvent.objects.get().payload, ensure_ascii=False, sort_keys=True)
    reply = BrainCall.objects.get().response_body or ""
    templates = [block, payload, body.decode(), reply]
    assert all(PIN in template for template in templates)  # each hashed text holds the PIN
    found = brute_force(templates, shown_prefixes(html))

    assert found == [], f"the PIN fell to a brute force in {time.monotonic() - started:.1f} s"
    assert PIN not in html
    # The pages do show the block's (keyed) hash: a plain one in its place would have fallen.
    assert keyed_sha256(block) in html
    assert hashlib.sha256(block.encode()).hexdigest()[:12] not in shown_prefixes(html)


def test_staff_see_another_members_block_item_ids_only_with_the_permission_made_for_it(
    memory_on: ReferenceEngine, user: Any, make_user: Any, conversation: Conversation
) -> None:
    item = add_memory(memory_on, PRIVATE, scope="private", by=user)
    run_turn(conversation=conversation, text="hello")
    block = MemoryBlock.objects.get(viewer=str(user.pk))
    assert item in block.items

    plain = Client()
    plain.force_login(view_only_staff(make_user))
    allowed = Client()
    allowed.force_login(view_only_staff(lambda name, **f: make_user("dave", **f),
                                        "view_member_item_ids"))  # fmt: skip
    page = f"/admin/pippa_memory/memoryblock/{block.pk}/change/"

    assert item not in plain.get(page).content.decode()
    assert "item id(s), withheld" in plain.get(page).content.decode()
    assert item in allowed.get(page).content.decode()
