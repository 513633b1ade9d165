"""Deciding: whether a new memory replaces a close older one, judged through the brain door's
``decide`` role in the engine's background thinker, after the remember was stored and
acknowledged (ingest never waits for it).

For each new current memory (in the order they were kept; memories kept before this existed are
never judged), :func:`~.similar.closest` finds the closest older memory its owner may see in the
same scope. When one is close, the door is asked once, with both texts and the options
:data:`KEEP_BOTH`, :data:`REPLACES` and :data:`ADDS_NOTHING`, for the new memory's owner (so a
member's private memory is never put before the door for anyone else). On *replaces* the older
memory is marked replaced by the newer; on *adds nothing* the newer is marked replaced by the
older; either moves the head, so no revision's block changes. No judgement means no change: the
offline vessel (confidence 0), a confidence below the engine's ``--decide-confidence``, a refused
or failed door. A failed door is tried once more, no sooner than :data:`RETRY_SECONDS` later.
Every decision is stored (:mod:`.storage.truth`) and shown on both items.

The calls are bounded as curation's are: at most :data:`MOST_A_ROUND` memories and
:data:`ROUND_SECONDS` a round, and the door's own throttle for unattended calls.
"""

import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from reference_engine.brain_client import BrainClient, DoorFailed
from reference_engine.similar import Similar, closest
from reference_engine.storage import truth

logger = logging.getLogger(__name__)

KEEP_BOTH = "keep both"
REPLACES = "the new one replaces the old"
ADDS_NOTHING = "the new one adds nothing"
OPTIONS = [KEEP_BOTH, REPLACES, ADDS_NOTHING]
QUESTION = (
    "A household's memory keeps one memory per fact. A newer memory was just told; an older one "
    "is close to it. Does the newer memory correct or update the older one so that only the "
    "newer is true now (the new one replaces the old), does it say nothing the older one does "
    "not (the new one adds nothing), or are both worth keeping (keep both)? When unsure, keep both."
)
MOST_A_ROUND = 20
ROUND_SECONDS = 30.0
RETRY_SECONDS = 30.0
"""The least time between a failed try at a decision and its one retry."""
NOTHING_CLOSE_NOW = "Tried again, nothing close is left to judge it against: it is kept."
"""The reason kept when a failed decision's retry finds its older memory gone (forgotten, made
private, replaced), so it is not tried again."""


def context(old: Any, new: truth.Fresh) -> str:
    return f"Older memory (kept {old.at}): {old.text}\nNewer memory (kept {new.at}): {new.text}"


class Decider:
    """Judges the new memories of ``state``'s souls through ``brain`` (module docstring)."""

    def __init__(self, state: Any, brain: BrainClient) -> None:
        self.state, self.brain = state, brain
        self.retry_after = RETRY_SECONDS
        self.calls = 0
        """Decide calls made by this process (the benchmark reports them per remember)."""

    def decide_due(self) -> int:
        """One round: each soul's unjudged memories, then the failed ones due a retry, until the
        round's time is spent. Returns how many memories were replaced."""
        if not self.brain.configured:
            return 0
        ends = time.monotonic() + ROUND_SECONDS
        retry_before = datetime.now(UTC) - timedelta(seconds=self.retry_after)
        before = retry_before.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        changed = 0
        with self.state.database.read() as cursor:
            souls = [row[0] for row in cursor.run("SELECT soul FROM engine_souls").all()]
        for soul in souls:
            with self.state.database.read() as cursor:
                fresh = truth.unjudged(cursor, soul, limit=MOST_A_ROUND)
                again = truth.failed_once(cursor, soul, before=before, limit=MOST_A_ROUND)
            for new, attempt in [*((f, 1) for f in fresh), *((f, 2) for f in again)]:
                if time.monotonic() >= ends or self.state.thinker.stopping.is_set():
                    return changed
                try:
                    changed += int(self.judge(soul, new, attempt=attempt))
                finally:
                    if attempt == 1:
                        with self.state.database.write() as cursor:
                            truth.mark_checked(cursor, soul, new.seq)
        return changed

    def judge(self, soul: str, new: truth.Fresh, *, attempt: int) -> bool:
        """Judge ``new`` against its closest older memory; True when one of them was replaced."""
        with self.state.database.read() as cursor:
            near = closest(cursor, self.state.meaning, soul, new, language=self.state.language)
        if near is None:
            if attempt > 1:  # what failed before is gone (forgotten, private): nothing to retry
                with self.state.database.write() as cursor:
                    truth.record_decision(
                        cursor,
                        soul,
                        new_seq=new.seq,
                        old_seq=None,
                        outcome=truth.KEPT_BOTH,
                        reason=NOTHING_CLOSE_NOW,
                        judged_by="the engine",
                    )
            return False
        old = near.memory
        data = {
            "question": QUESTION,
            "options": OPTIONS,
            "context": context(old, new),
            "about": [old.id, new.id],
        }
        call_id = f"engine_decide_{new.id}_{old.id}_{attempt}"
        self.calls += 1
        try:
            judgement = self.brain.decide(soul, data, viewer=new.owner, webhook_id=call_id)
        except DoorFailed as failed:
            logger.warning(
                "Deciding on a new memory of %s failed (%s); both are kept", soul, failed
            )
            with self.state.database.write() as cursor:
                truth.record_decision(
                    cursor,
                    soul,
                    new_seq=new.seq,
                    old_seq=old.seq,
                    outcome=truth.DOOR_FAILED,
                    reason=failed.reason,
                    judged_by="the brain door",
                    brain_call=call_id,
                )
            return False
        return self.apply(soul, new, near, judgement, call_id)

    def apply(
        self, soul: str, new: truth.Fresh, near: Similar, judgement: Any, call_id: str
    ) -> bool:
        """Keep the door's decision, and replace one memory when it was sure enough."""
        output = judgement.output
        choice, confidence = output["choice"], float(output["confidence"])
        reason = str(output["reason"])
        judged_by = f"vessel {judgement.vessel}" + (
            " (does not reason)" if judgement.synthetic else ""
        )
        old = near.memory
        outcome, rev = truth.KEPT_BOTH, None
        with self.state.database.write() as cursor:
            sure = confidence >= self.state.decide_confidence and not judgement.synthetic
            if sure and choice in (REPLACES, ADDS_NOTHING):
                if truth.is_current(cursor, old.seq, scope=new.scope) and truth.is_current(
                    cursor, new.seq, scope=new.scope
                ):
                    if choice == REPLACES:
                        rev, outcome = truth.replace(cursor, soul, old.seq, new.seq), truth.REPLACED
                    else:
                        rev = truth.replace(cursor, soul, new.seq, old.seq)
                        outcome = truth.ADDS_NOTHING
                else:
                    reason += (
                        " (one of the two was forgotten or replaced meanwhile: nothing changed)"
                    )
            truth.record_decision(
                cursor,
                soul,
                new_seq=new.seq,
                old_seq=old.seq,
                outcome=outcome,
                reason=reason,
                judged_by=judged_by,
                choice=choice,
                confidence=confidence,
                brain_call=call_id,
                rev=rev,
            )
        return outcome != truth.KEPT_BOTH
