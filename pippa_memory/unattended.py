"""The wake: turns with no human in them carry memory too.

A scheduled job's run pins the soul's head revision, then asks the engine for the job's bundle at
that revision, so the same soul, job and revision always give the same bytes; a Soul Stream wake
carries the brief the engine curated. Both are built from household items only: a run has no
member, so it asks for the head with no viewer, and the engine builds bundles and briefs from
household items. A run's engine calls share a budget of their own, ``UNATTENDED_BUDGET`` (30 s):
the engine curates a bundle or brief through a vessel, so one that takes seconds is no failure,
and no run is held to a chat turn's budget. Both are soft: with the engine absent the run goes
ahead without them and its record says why; so does a run whose bundle or brief holds an item
forgotten here (``stale_block``): each names the ids of the items it was built from (contract
version 3), checked against the tombstones before it is used. With memory off no engine call is
made. Either way the run's
conversation is pinned before its turn, through :func:`pippa_memory.pins.records.pin_conversation` like
a chat's first turn.
"""

import hashlib
import time
from typing import Any

from pippa_memory.conf import memory_settings, why_memory_does_not_apply
from pippa_memory.engine import contract
from pippa_memory.engine.budget import seconds_left
from pippa_memory.engine.client import call_engine
from pippa_memory.member_text_hash import keyed_sha256
from pippa_memory.models import UnattendedMemory
from pippa_memory.pins.blocks import render_block
from pippa_memory.pins.records import STALE_BLOCK, pin_conversation
from pippa_memory.pins.tombstones import tombstoned_items
from webui.models import Conversation, UnattendedRun
from webui.text.canonical import without_nul


def pin_absent(
    conversation: Conversation, reason: str, latency: int | None = None
) -> dict[str, Any]:
    """Pin the run's conversation absent for ``reason``; the run's record says why it has none."""
    pin_conversation(conversation, revision=None, sha256="", reason=reason, latency_ms=latency)
    return {"source": "none", "reason": reason}


def attach(
    conversation: Conversation, *, source: str, revision: str, text: str, latency: int | None
) -> dict[str, Any]:
    """Store the run's bundle or brief and pin the conversation to its revision (for life, as any
    pin): it stands in the memory block's place at the run's turn."""
    text = without_nul(text)
    digest = keyed_sha256(text)  # stored and shown: keyed, so staff cannot test a guess against it
    UnattendedMemory.objects.create(
        conversation=conversation, source=source, revision=revision, sha256=digest, text=text
    )
    pin_conversation(conversation, revision=revision, sha256=digest, reason="", latency_ms=latency)
    return {"source": source, "revision": revision, "sha256": digest}


def holds_forgotten(conversation: Conversation, items: list[str]) -> bool:
    """Whether a bundle or brief built from ``items`` holds one forgotten here, or made private
    (a run has no viewer): its forget not confirmed, or not yet applied. It is not used."""
    return bool(tombstoned_items(soul_id=conversation.soul_id, viewer="", items=items))


def prepare_job(conversation: Conversation, run: UnattendedRun) -> dict[str, Any]:
    """Pin the job's conversation to the soul's head and attach its bundle at that revision; the
    two calls share the run's ``UNATTENDED_BUDGET``."""
    deadline = time.monotonic() + memory_settings.UNATTENDED_BUDGET
    soul = conversation.soul.slug
    head = call_engine(
        "GET", f"/v1/souls/{soul}/head", schema=contract.BLOCK, budget=seconds_left(deadline)
    )
    if not head.ok:
        return pin_absent(conversation, head.reason, head.latency_ms)
    revision = head.data["revision"]
    job = {"id": str(run.job_id or run.pk), "name": run.job.name if run.job else "job"}
    bundle = call_engine(
        "POST",
        "/v1/bundles",
        body={"soul": soul, "job": job, "revision": revision},
        schema=contract.BUNDLE,
        budget=seconds_left(deadline),
    )
    if not bundle.ok:
        return pin_absent(conversation, bundle.reason, bundle.latency_ms)
    data = bundle.data
    if holds_forgotten(conversation, data["items"]):
        return pin_absent(conversation, STALE_BLOCK, bundle.latency_ms)
    text = data["bundle"]
    if data["revision"] != revision or hashlib.sha256(text.encode()).hexdigest() != data["sha256"]:
        return pin_absent(conversation, "bundle_mismatch", bundle.latency_ms)
    if len(text) > memory_settings.MAX_BLOCK_CHARS:
        return pin_absent(conversation, "block_too_large", bundle.latency_ms)
    return attach(
        conversation, source="bundle", revision=revision, text=text, latency=bundle.latency_ms
    )


def prepare_wake(conversation: Conversation, run: UnattendedRun) -> dict[str, Any]:
    """Attach the brief the engine curated for the wake, within the run's ``UNATTENDED_BUDGET``."""
    brief = call_engine(
        "POST",
        "/v1/wakes/brief",
        body={"soul": conversation.soul.slug, "wake": {"kind": "soul_stream", "id": str(run.pk)}},
        schema=contract.BRIEF,
        budget=memory_settings.UNATTENDED_BUDGET,
    )
    if not brief.ok:
        return pin_absent(conversation, brief.reason, brief.latency_ms)
    if holds_forgotten(conversation, brief.data["items"]):
        return pin_absent(conversation, STALE_BLOCK, brief.latency_ms)
    if len(brief.data["brief"]) > memory_settings.MAX_BLOCK_CHARS:
        return pin_absent(conversation, "block_too_large", brief.latency_ms)
    return attach(
        conversation,
        source="brief",
        revision=brief.data["revision"],
        text=brief.data["brief"],
        latency=brief.latency_ms,
    )


def prepare_unattended(conversation: Conversation, run: UnattendedRun) -> dict[str, Any]:
    """Attach the run's bundle or brief, or record why it has none. This is where an unattended
    run's conversation is pinned, before its turn: the plug-in's ``settle`` leaves it alone."""
    left_out = why_memory_does_not_apply(conversation)
    if left_out:
        return pin_absent(conversation, left_out)
    if conversation.kind == Conversation.Kind.JOB:
        return prepare_job(conversation, run)
    return prepare_wake(conversation, run)


def unattended_block(conversation: Conversation) -> str | None:
    """The envelope of what the run carried, in the memory block's place; None without it."""
    memory = UnattendedMemory.objects.filter(conversation=conversation).first()
    if memory is None:
        return None
    return render_block(
        soul_slug=conversation.soul.slug, revision=memory.revision, text=memory.text
    )
