"""The pinned head: a conversation's memory block is decided once, at its first turn.

At the first turn one engine call gets the soul's head revision and its block rendered for the
conversation's viewer (household items and that member's private ones; no viewer, household items
only); the block is stored locally (immutable per soul, revision and viewer, with its sha256 and
the ids of its items) and the revision is written on the conversation row by a conditional update,
so two concurrent first turns end with one pin. A conversation has one viewer, so the pin stays
per conversation. Every
later turn reads the block from the local table with no engine call, so its bytes never move.
When memory is off, the conversation is temporary, the engine is unconfigured or down, or its block
is too large, the conversation is *pinned absent*, and the reason is recorded.

Absent *by choice* (:data:`ABSENT_BY_CHOICE`: memory off, temporary, no engine configured, block too
large) is for life. Absent because the engine failed is not: each later turn asks the engine once
more, within the turn's budget (an open breaker answers at once, with no connection), and the first
time it answers the conversation is pinned, recorded with the reason ``engine_recovered``. That
moves the front of the prompt once, one deliberate prompt-cache miss; afterwards the pin holds for
life like any other. A pinned block the engine answers ``410 gone`` for (it held an item since
forgotten, which must never render again) is re-pinned to the head, recorded with the reason
``forgotten``: again one prompt-cache miss.

A block holding an item forgotten (or made private to someone else) since the engine rendered it is
never pinned: each forget first records a tombstone (:mod:`pippa_memory.pins.tombstones`), and the pin
step checks the block's items against them before storing it (asking the engine once more; still
stale, the conversation is pinned absent with the reason ``stale_block``, an engine failure, so the
next turn asks again), once more after its pin is committed, and whenever a later turn reads the
stored block (then it re-pins, ``forgotten``).

All of this happens in :func:`settle_turn_pin`, the plug-in's ``settle`` point, before the prompt
is assembled; :func:`pinned_block`, which assembly calls, only reads. Every pin, the unattended
runs' too, is written by :func:`pin_conversation`.
"""

import logging
import time
from dataclasses import dataclass
from html import escape

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from pippa_memory.conf import memory_applies, memory_settings, why_memory_does_not_apply
from pippa_memory.engine import contract
from pippa_memory.engine.client import call_engine
from pippa_memory.engine.members import viewer_id, viewer_query
from pippa_memory.models import MemoryBlock, PinRecord, sha256_of
from pippa_memory.pins.tombstones import tombstoned_items
from webui.models import Conversation
from webui.text.canonical import without_nul

logger = logging.getLogger(__name__)

#: Why a conversation may be pinned absent for life: a decision, not a failure.
ABSENT_BY_CHOICE = frozenset(
    {"memory_disabled", "temporary", "engine_unconfigured", "block_too_large"}
)
#: The pin history's reason for a conversation pinned at a later turn, once the engine answered.
ENGINE_RECOVERED = "engine_recovered"
#: The pin history's reason for a re-pin because the pinned block held an item since forgotten.
FORGOTTEN = "forgotten"
#: Why a conversation is pinned absent when the engine's block still held a forgotten item.
STALE_BLOCK = "stale_block"


class BlockGone(Exception):
    """The engine answered ``410 gone`` for a pinned block: it held an item since forgotten."""


@dataclass(frozen=True)
class PinDecision:
    """What the first turn found: a revision and block, or the reason there is none."""

    revision: str | None
    text: str | None
    reason: str
    latency_ms: int | None
    items: tuple[str, ...] = ()


def block_viewer(conversation: Conversation) -> str:
    """The viewer key of ``conversation``'s blocks: its member's id, "" for household only."""
    return viewer_id(conversation) or ""


def render_block(*, soul_slug: str, revision: str, text: str) -> str:
    """The fixed envelope the block sits in, after the vault base and before the disclosure."""
    return (
        f'<memory soul="{escape(soul_slug)}" revision="{escape(revision)}">\n'
        f"{text.strip()}\n</memory>"
    )


def holds_tombstoned(conversation: Conversation, items: tuple[str, ...] | list[str]) -> bool:
    """Whether a block for ``conversation``'s viewer holding ``items`` holds one forgotten, or made
    private to someone else, since: a block that must not be pinned or rendered."""
    return bool(
        tombstoned_items(
            soul_id=conversation.soul_id, viewer=block_viewer(conversation), items=items
        )
    )


def decide_pin(conversation: Conversation, *, budget: float | None = None) -> PinDecision:
    """:func:`ask_for_head`, refusing a block that holds a tombstoned item (the engine rendered it
    before a forget it has applied since): the engine is asked once more within ``budget``, and if
    its block is still stale the decision is absent, ``stale_block`` (an engine failure)."""
    seconds = budget if budget is not None else memory_settings.CHAT_BUDGET
    deadline = time.monotonic() + seconds
    decision = ask_for_head(conversation, budget=seconds)
    if decision.revision is None or not holds_tombstoned(conversation, decision.items):
        return decision
    decision = ask_for_head(conversation, budget=max(0.0, deadline - time.monotonic()))
    if decision.revision is None or not holds_tombstoned(conversation, decision.items):
        return decision
    logger.warning(
        "The engine's block %s for conversation %s still holds a forgotten item; pinned absent.",
        decision.revision,
        conversation.pk,
    )
    return PinDecision(None, None, STALE_BLOCK, decision.latency_ms)


def ask_for_head(conversation: Conversation, *, budget: float | None = None) -> PinDecision:
    """Ask the engine for the soul's head as the conversation's viewer sees it, or say why the
    conversation goes without a block."""
    left_out = why_memory_does_not_apply(conversation)
    if left_out:
        return PinDecision(None, None, left_out, None)
    soul = conversation.soul
    answer = call_engine(
        "GET",
        f"/v1/souls/{soul.slug}/head{viewer_query(conversation)}",
        schema=contract.BLOCK,
        budget=budget,
    )
    if not answer.ok:
        return PinDecision(None, None, answer.reason, answer.latency_ms)
    data = answer.data
    if data["soul"] != soul.slug:
        return PinDecision(None, None, "wrong_soul", answer.latency_ms)
    if data["viewer"] != viewer_id(conversation):
        # Another member's block would show their private items: never pin it.
        return PinDecision(None, None, "wrong_viewer", answer.latency_ms)
    if len(data["block"]) > memory_settings.MAX_BLOCK_CHARS:
        # Never silently cut: a truncated block would read as the whole memory.
        return PinDecision(None, None, "block_too_large", answer.latency_ms)
    text = without_nul(data["block"])
    return PinDecision(data["revision"], text, "", answer.latency_ms, tuple(data["items"]))


def store_block(
    *, conversation: Conversation, revision: str, text: str, items: tuple[str, ...] | list[str]
) -> MemoryBlock:
    """Keep the block for (soul, revision, the conversation's viewer) with its item ids; an
    existing row wins, since a revision's block for one viewer is immutable."""
    digest = sha256_of(text)
    key = {"soul": conversation.soul, "revision": revision, "viewer": block_viewer(conversation)}
    try:
        with transaction.atomic():
            block, created = MemoryBlock.objects.get_or_create(
                **key, defaults={"text": text, "sha256": digest, "items": list(items)}
            )
    except IntegrityError:
        block, created = MemoryBlock.objects.get(**key), False
    if not created and block.sha256 != digest:
        logger.warning(
            "The engine sent different text for %s revision %s; the stored block is kept.",
            conversation.soul.slug,
            revision,
        )
    return block


def pin_conversation(
    conversation: Conversation,
    *,
    revision: str | None,
    sha256: str,
    reason: str,
    latency_ms: int | None,
    only_if: QuerySet[Conversation] | None = None,
) -> bool:
    """Pin ``conversation`` to ``revision`` (``None``: pinned absent, for ``reason``) and write its
    pin record, if the conversation is still as the caller saw it: ``only_if``, by default not
    pinned yet. One conditional update in one transaction, so of two racing turns one pins and only
    that one writes a record. Afterwards the ``pinned_*`` fields are current (the winner's).

    Returns whether this call pinned. Every pin goes through here: a chat's first turn, the
    re-pin after an engine failure, and an unattended run's bundle or brief.
    """
    if only_if is None:
        only_if = Conversation.objects.filter(pk=conversation.pk, pinned_at__isnull=True)
    with transaction.atomic():
        won = bool(only_if.update(pinned_head=revision, pinned_at=timezone.now()))
        if won:
            PinRecord.objects.create(
                conversation=conversation,
                soul=conversation.soul,
                outcome=PinRecord.Outcome.PINNED if revision else PinRecord.Outcome.ABSENT,
                revision=revision or "",
                sha256=sha256,
                reason=reason,
                engine_latency_ms=latency_ms,
            )
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return won


def pin_as_decided(
    conversation: Conversation,
    *,
    decision: PinDecision,
    reason: str,
    only_if: QuerySet[Conversation] | None = None,
) -> bool:
    """Store the block ``decision`` found (if any) and pin ``conversation`` to it; then, should
    a tombstone for one of its items have been committed since it was decided, unpin it
    (:func:`unpin_if_tombstoned`)."""
    block = None
    if decision.revision is not None:
        block = store_block(
            conversation=conversation,
            revision=decision.revision,
            text=decision.text or "",
            items=decision.items,
        )
    won = pin_conversation(
        conversation,
        revision=decision.revision,
        sha256=block.sha256 if block else "",
        reason=reason,
        latency_ms=decision.latency_ms,
        only_if=only_if,
    )
    if won and block is not None:
        unpin_if_tombstoned(conversation, block=block)
    return won


def unpin_if_tombstoned(conversation: Conversation, *, block: MemoryBlock) -> None:
    """Pin ``conversation`` absent (``stale_block``: the next turn asks again) if its just
    committed ``block`` holds a tombstoned item, and delete the block if nothing pins its revision.

    This closes the race with a forget: either this check, made after the pin was committed, sees
    the forget's tombstone, or the tombstone (and so the forget's scan of pinned blocks, which
    follows the engine's answer) came after the pin, and the scan re-pins this conversation.
    """
    if not holds_tombstoned(conversation, block.items):
        return
    logger.warning(
        "Conversation %s was pinned to %s as an item in it was being forgotten; pinned absent.",
        conversation.pk,
        block.revision,
    )
    still_pinned = Conversation.objects.filter(
        pk=conversation.pk, pinned_head=block.revision, pinned_at=conversation.pinned_at
    )
    pin_conversation(
        conversation,
        revision=None,
        sha256="",
        reason=STALE_BLOCK,
        latency_ms=None,
        only_if=still_pinned,
    )
    if not Conversation.objects.filter(soul_id=block.soul_id, pinned_head=block.revision).exists():
        MemoryBlock.objects.filter(pk=block.pk).delete()


def pin_at_first_turn(conversation: Conversation, *, budget: float | None = None) -> bool:
    """Ask the engine for the soul's head and pin ``conversation`` to it, or pin it absent with
    the reason; of two concurrent first turns one pins. Returns whether this call pinned."""
    decision = decide_pin(conversation, budget=budget)
    return pin_as_decided(conversation, decision=decision, reason=decision.reason)


def absent_because_engine_failed(conversation: Conversation) -> bool:
    """Whether ``conversation`` is pinned absent because the engine failed, so that this turn may
    ask the engine again. False at once (no query) when asking could not help: memory off, a
    temporary chat, no engine configured."""
    if conversation.pinned_at is None or conversation.pinned_head is not None:
        return False
    if not memory_applies(conversation) or not memory_settings.URL:
        return False
    reason = (
        PinRecord.objects.filter(conversation=conversation)
        .exclude(outcome=PinRecord.Outcome.REPIN_REQUESTED)
        .order_by("-created_at", "-id")
        .values_list("reason", flat=True)
        .first()
    )
    return reason is not None and reason not in ABSENT_BY_CHOICE


def repin_after_engine_failure(
    conversation: Conversation, *, budget: float | None = None
) -> str | None:
    """Ask the engine once more for a conversation pinned absent because it failed.

    An answer with a usable block pins the conversation (reason ``engine_recovered``): the front of
    the prompt moves once, one prompt-cache miss. An answer whose block is refused by choice (too
    large) pins it absent for life. Another failure changes nothing and writes nothing, so a long
    outage does not grow the pin history by a row a turn; the next turn asks again.

    Returns the pin's reason when this call pinned, else ``None``.
    """
    decision = decide_pin(conversation, budget=budget)
    if decision.revision is None and decision.reason not in ABSENT_BY_CHOICE:
        logger.info(
            "Conversation %s stays absent; the engine still fails (%s).",
            conversation.pk,
            decision.reason,
        )
        return None
    still_absent = Conversation.objects.filter(
        pk=conversation.pk, pinned_head__isnull=True, pinned_at=conversation.pinned_at
    )
    reason = ENGINE_RECOVERED if decision.revision is not None else decision.reason
    won = pin_as_decided(conversation, decision=decision, reason=reason, only_if=still_absent)
    return reason if won else None


def repin_after_forget(conversation: Conversation, *, budget: float | None = None) -> str | None:
    """Pin a conversation whose pinned block is gone (it held an item since forgotten) to the
    head, recorded with the reason ``forgotten``: the front of the prompt moves once, one
    prompt-cache miss, and the forgotten item never renders again. If the engine fails now, the
    conversation is pinned absent for that failure, and recovers as any such conversation does.
    Returns ``forgotten`` (the cause of the move) when this call re-pinned, else ``None``.
    """
    decision = decide_pin(conversation, budget=budget)
    still_pinned = Conversation.objects.filter(
        pk=conversation.pk, pinned_head=conversation.pinned_head, pinned_at=conversation.pinned_at
    )
    reason = FORGOTTEN if decision.revision is not None else decision.reason
    won = pin_as_decided(conversation, decision=decision, reason=reason, only_if=still_pinned)
    return FORGOTTEN if won else None


def stored_block(conversation: Conversation) -> MemoryBlock | None:
    """The stored block of ``conversation``'s pin, for its viewer; ``None`` when not stored."""
    return MemoryBlock.objects.filter(
        soul_id=conversation.soul_id,
        revision=conversation.pinned_head,
        viewer=block_viewer(conversation),
    ).first()


def fetch_block(conversation: Conversation, *, budget: float | None = None) -> MemoryBlock | None:
    """The stored block a pinned conversation needs, fetched by revision for its viewer if the
    row went missing; ``None`` (logged) when the engine cannot give it. Raises
    :class:`BlockGone` when the engine answers that the block is gone, or when the stored block
    holds an item tombstoned for its viewer (forgotten, or made private to someone else)."""
    block = stored_block(conversation)
    if block is not None:
        if holds_tombstoned(conversation, block.items):
            raise BlockGone(conversation.pinned_head)
        return block
    answer = call_engine(
        "GET",
        f"/v1/souls/{conversation.soul.slug}/blocks/{conversation.pinned_head}"
        f"{viewer_query(conversation)}",
        schema=contract.BLOCK,
        budget=budget,
    )
    if answer.status == 410:
        raise BlockGone(conversation.pinned_head)
    if (
        not answer.ok
        or answer.data["revision"] != conversation.pinned_head
        or answer.data["viewer"] != viewer_id(conversation)
    ):
        logger.error(
            "Conversation %s is pinned to %s but its block is missing here and at the engine (%s).",
            conversation.pk,
            conversation.pinned_head,
            answer.reason or "revision or viewer mismatch",
        )
        return None
    return store_block(
        conversation=conversation,
        revision=conversation.pinned_head,
        text=without_nul(answer.data["block"]),
        items=answer.data["items"],
    )


# Rendered blocks by (soul id, revision, viewer). A revision's block for one viewer is immutable,
# so a process may keep them: later turns then cost no query and no engine call for the front of
# the prompt. The viewer is part of the key: one member's block never fronts another's prompt.
RENDERED: dict[tuple[int, str, str], str] = {}
RENDERED_MAX = 512


def rendered_key(conversation: Conversation) -> tuple[int, str, str]:
    return (conversation.soul_id, conversation.pinned_head or "", block_viewer(conversation))


def keep_rendered(conversation: Conversation, block: MemoryBlock) -> str:
    """The envelope of ``conversation``'s pinned ``block``, kept for the process."""
    text = render_block(
        soul_slug=conversation.soul.slug, revision=conversation.pinned_head, text=block.text
    )
    if len(RENDERED) >= RENDERED_MAX:
        RENDERED.pop(next(iter(RENDERED)))
    RENDERED[rendered_key(conversation)] = text
    return text


def repin_cause(conversation: Conversation) -> str:
    """Why a conversation that had turns is unpinned: a forget whose item its block held
    (``forgotten``), an admin's re-pin (``repin: <reason>``, from the latest request in its pin
    history), or a conversation from before the memory layer was installed (``first_pin``)."""
    latest = (
        PinRecord.objects.filter(conversation=conversation)
        .order_by("-created_at", "-id")
        .values_list("outcome", "reason")
        .first()
    )
    if latest is None or latest[0] != PinRecord.Outcome.REPIN_REQUESTED:
        return "first_pin"
    if latest[1] == FORGOTTEN:
        return FORGOTTEN
    return f"repin: {latest[1]}" if latest[1] else "repin"


def settle_turn_pin(
    conversation: Conversation, *, budget: float | None = None, later_turn: bool = False
) -> str | None:
    """Fix, before a chat turn's prompt is assembled, the block it will carry: pin at the first
    turn (or at the turn after an admin's re-pin); at a later one, ask once more if the
    conversation is absent because the engine failed (``engine_recovered``); and have the pinned
    block at hand, fetched by revision if its row went missing, or re-pinned if the engine says it
    is gone (``forgotten``). Every engine call here shares ``budget``; afterwards
    :func:`pinned_block` only reads.

    Returns the cause when it pinned afresh at a ``later_turn`` (the re-pin's, with the admin's
    reason; ``engine_recovered``; ``forgotten``), for the host's cache ledger; else ``None``.
    """
    seconds = budget if budget is not None else memory_settings.CHAT_BUDGET
    deadline = time.monotonic() + seconds
    cause = None
    if conversation.pinned_at is None:
        cause = repin_cause(conversation) if later_turn else None
        pin_at_first_turn(conversation, budget=seconds)
    elif absent_because_engine_failed(conversation):
        cause = repin_after_engine_failure(conversation, budget=seconds)
    if conversation.pinned_head is None or rendered_key(conversation) in RENDERED:
        return cause
    try:
        block = fetch_block(conversation, budget=max(0.0, deadline - time.monotonic()))
    except BlockGone:
        cause = repin_after_forget(conversation, budget=max(0.0, deadline - time.monotonic()))
        block = stored_block(conversation) if conversation.pinned_head is not None else None
    if block is not None:
        keep_rendered(conversation, block)
    return cause


def pinned_block(conversation: Conversation) -> str | None:
    """The memory block this turn of ``conversation`` carries, as :func:`settle_turn_pin` fixed it:
    ``None`` when pinned absent (or its block is missing, which settling logged). Only reads: no
    engine call, no write; once rendered in this process, no query either."""
    if conversation.pinned_head is None:
        return None
    key = rendered_key(conversation)
    if key in RENDERED:
        return RENDERED[key]
    block = stored_block(conversation)
    return keep_rendered(conversation, block) if block is not None else None


def request_repin(*, conversation: Conversation, requested_by: object, reason: str) -> PinRecord:
    """Make the conversation pin afresh at its next turn, recording who asked and why.

    This moves the front of the prompt once: the vessel's prompt cache misses on the next turn.
    """
    with transaction.atomic(durable=True):
        record = PinRecord.objects.create(
            conversation=conversation,
            soul=conversation.soul,
            outcome=PinRecord.Outcome.REPIN_REQUESTED,
            revision=conversation.pinned_head or "",
            reason=reason,
            requested_by=requested_by,
        )
        Conversation.objects.filter(pk=conversation.pk).update(pinned_head=None, pinned_at=None)
    conversation.refresh_from_db(fields=["pinned_head", "pinned_at"])
    return record
