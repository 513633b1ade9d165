"""The memory plug-in's lines on the household's health page (through the host's
``health_lines`` extension point), and the delivery worker's heartbeat.

Four lines, in a family's words: the delivery worker (its heartbeat), Pippa's memory (the
engine: reached now, when last reached, and the breaker), the deliveries (how long turns wait
to reach it, and those that never will), and the brain door (whether the engine can think
through the household's models). The delivery worker beats with the host's
:class:`~webui.health.beats.ProcessBeat` and, at each beat, asks the engine a question that
costs it nothing (the answers of no conversation): each answer is the engine's own heartbeat.
"""

import uuid
from datetime import timedelta

from django.db.models import Min
from django.utils import timezone

from pippa_memory.brain.service import eligible_vessels
from pippa_memory.brain.signatures import configured_secrets
from pippa_memory.conf import memory_settings
from pippa_memory.engine import contract
from pippa_memory.engine.client import BREAKER, EngineOutcome, call_engine
from pippa_memory.models import OutboxEvent
from webui.extensions import HealthLine
from webui.health.beats import ProcessBeat, record_beat
from webui.health.lines import clock, heartbeat_line, how_long, newest_beats

#: A call the engine answers from its own database, changing nothing: no conversation's answers.
PROBE_PATH = f"/v1/conversations/{uuid.UUID(int=0)}/answers"
#: Seconds the probe may take, from the page or from the worker's heartbeat.
PROBE_BUDGET = 2.0
#: A turn waiting longer than this to reach memory makes the deliveries line amber.
LAG_WARNING_SECONDS = 60.0
MEMORY = "Pippa's memory"


def probe_engine() -> EngineOutcome:
    """Ask the engine the question that costs nothing; a success is recorded as its beat."""
    outcome = call_engine("GET", PROBE_PATH, schema=contract.ANSWERS, budget=PROBE_BUDGET)
    if outcome.ok:
        record_beat("engine", host=memory_settings.URL.rstrip("/")[:255])
    return outcome


def start_delivery_heartbeat() -> ProcessBeat:
    """The delivery worker's heartbeat, probing the engine at each beat when memory is on."""
    also = probe_engine if memory_settings.ENABLED and memory_settings.URL else None
    return ProcessBeat("delivery", also=also).start()


def delivery_worker_line() -> HealthLine:
    return heartbeat_line(
        role="delivery",
        title="The delivery worker (tells Pippa's memory what was said)",
        what_it_does="replies wait to reach Pippa's memory (none is lost: they go when it is back)",
        start_with="python manage.py memory_outbox deliver",
    )


def engine_line() -> HealthLine:
    """Pippa's memory: off, not set, paused by the breaker, unreachable now, or answering."""
    title = f"{MEMORY} (the memory engine)"
    if not memory_settings.ENABLED:
        return HealthLine("engine", title, "off", "Memory is switched off for this household.")
    if not memory_settings.URL.rstrip("/"):
        return HealthLine(
            "engine",
            title,
            "warning",
            "No memory engine is set, so chat goes on without memory.",
            "Set PIPPA_MEMORY_URL (and PIPPA_MEMORY_TOKEN) to the engine's address, then "
            "restart the site's processes.",
        )
    breaker = BREAKER.get()
    beats = newest_beats("engine")
    details: dict[str, object] = {
        "url": memory_settings.URL,
        "breaker": breaker.current_state,
        "failures_in_a_row": breaker.fail_counter,
        "last_reached_at": beats[0].beat_at.isoformat() if beats else None,
    }
    last = f" It was last reached at {clock(beats[0].beat_at)}." if beats else ""
    outcome = probe_engine()
    details.update({"reachable": outcome.ok, "reason": outcome.reason})
    if outcome.ok:
        details["milliseconds"] = outcome.latency_ms
        return HealthLine(
            "engine", title, "ok", f"It answers, in {outcome.latency_ms} ms.", details=details
        )
    restart = (
        "Chat goes on without memory meanwhile, and what was said waits for it. Under "
        "`make run` the engine is started again within seconds; elsewhere check that its "
        "process runs and PIPPA_MEMORY_URL names it."
    )
    if outcome.reason == "breaker_open":
        opened = breaker._state_storage.opened_at  # pybreaker keeps when it opened here
        until = opened + timedelta(seconds=breaker.reset_timeout) if opened else None
        when = f" until {clock(until)}" if until else ""
        return HealthLine(
            "engine",
            title,
            "failing",
            f"It failed {breaker.fail_max} times in a row, so calls to it are paused{when}.{last}",
            restart,
            details,
        )
    return HealthLine(
        "engine",
        title,
        "failing",
        f"It cannot be reached now ({outcome.reason}).{last}",
        restart,
        details,
    )


def deliveries_line() -> HealthLine:
    """How long replies wait to reach memory, and those that never will (dead)."""
    title = f"What reaches {MEMORY}"
    if not memory_settings.ENABLED:
        return HealthLine("deliveries", title, "off", "Memory is switched off: nothing is sent.")
    now = timezone.now()
    pending = OutboxEvent.objects.filter(status=OutboxEvent.Status.PENDING)
    waiting = pending.count()
    oldest = pending.aggregate(oldest=Min("created_at"))["oldest"]
    dead = OutboxEvent.objects.filter(status=OutboxEvent.Status.DEAD).count()
    lag = (now - oldest).total_seconds() if oldest else 0.0
    details = {"pending": waiting, "oldest_pending_seconds": round(lag, 1), "dead": dead}
    if dead:
        return HealthLine(
            "deliveries",
            title,
            "failing",
            f"{dead} repl{'y' if dead == 1 else 'ies'} never reached it: the engine refused "
            "them or they waited too long.",
            "When Pippa's memory answers again, run `python manage.py memory_outbox redrive`, or "
            "choose them in the admin's Outbox events and use *Dead → pending*; each one's "
            "error is shown there.",
            details,
        )
    if lag > LAG_WARNING_SECONDS:
        return HealthLine(
            "deliveries",
            title,
            "warning",
            f"{waiting} repl{'y is' if waiting == 1 else 'ies are'} waiting to reach it, the "
            f"oldest for {how_long(lag)}.",
            "Nothing is lost: they go once Pippa's memory and the delivery worker are both "
            "running (see their lines).",
            details,
        )
    sentence = "Every reply has reached it."
    if waiting:
        sentence = f"{waiting} waiting, the oldest for {how_long(lag)}: on their way."
    return HealthLine("deliveries", title, "ok", sentence, details=details)


def brain_door_line() -> HealthLine:
    """Whether the engine can think through the household's models: a secret, and a model."""
    title = "How Pippa's memory thinks (the brain door)"
    if not memory_settings.ENABLED:
        return HealthLine("brain_door", title, "off", "Memory is switched off: the door is shut.")
    written = len(memory_settings.BRAIN_SECRET.split())
    usable = len(configured_secrets())
    models = [vessel.name for vessel in eligible_vessels()]
    details = {"secrets": written, "usable_secrets": usable, "models": len(models)}
    if not usable:
        return HealthLine(
            "brain_door",
            title,
            "warning",
            "It has no usable secret, so Pippa's memory cannot think: questions get no answer "
            "and wake briefs are only the newest memories.",
            "Set PIPPA_MEMORY_BRAIN_SECRET to a whsec_ secret the engine shares, then restart.",
            details,
        )
    if not models:
        return HealthLine(
            "brain_door",
            title,
            "warning",
            "No model may lend its judgement, so Pippa's memory cannot think.",
            "In the admin, give an enabled model (Vessels) a brain priority.",
            details,
        )
    unusable = f" ({written - usable} unusable secret ignored)" if written > usable else ""
    return HealthLine(
        "brain_door",
        title,
        "ok" if not unusable else "warning",
        f"Ready: it thinks through {', '.join(models)}{unusable}.",
        "Remove or fix the secret that is not a whsec_ secret." if unusable else "",
        details,
    )


def memory_health_lines() -> list[HealthLine]:
    """The plug-in's lines, in the order the page shows them."""
    return [delivery_worker_line(), engine_line(), deliveries_line(), brain_door_line()]
