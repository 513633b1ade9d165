"""What the memory plug-in carries through one turn, from one extension point to the next."""

import time
from dataclasses import dataclass, field
from typing import Any

from pippa_memory.conf import memory_settings
from webui.extensions import TurnContext


@dataclass
class MemoryTurn:
    """The plug-in's state for one turn (``turn.state(MemoryTurn)``); a new turn starts empty."""

    #: ``time.monotonic()`` past which the turn's engine calls give up; set at the first of them.
    deadline: float | None = None
    #: Answers put in this turn's per-turn slot, acknowledged once the assistant row is saved.
    delivered_answers: list[dict[str, Any]] = field(default_factory=list)
    #: Answers that rode an earlier turn and are offered again (their acknowledgement failed):
    #: never put in the slot, only acknowledged once this turn is saved.
    ridden_answers: list[dict[str, Any]] = field(default_factory=list)


def remaining(turn: TurnContext) -> float:
    """Seconds left in this chat turn's engine budget (``CHAT_BUDGET``, :mod:`~pippa_memory.engine.budget`);
    the clock starts at the first engine call."""
    state = turn.state(MemoryTurn)
    if state.deadline is None:
        state.deadline = time.monotonic() + memory_settings.CHAT_BUDGET
    return max(0.0, state.deadline - time.monotonic())
