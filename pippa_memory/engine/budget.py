"""One budget per chat turn for every engine call on the chat path (the pin, the answers fetch).

A down engine costs one bounded wait per turn at most, then nothing once the breaker opens.
"""

import time

from pippa_memory.conf import memory_settings
from pippa_memory.turn.state import MemoryTurn
from webui.extensions import TurnContext


def remaining(turn: TurnContext) -> float:
    """Seconds left in this turn's engine budget; the clock starts at the first engine call."""
    state = turn.state(MemoryTurn)
    if state.deadline is None:
        state.deadline = time.monotonic() + memory_settings.CHAT_BUDGET
    return max(0.0, state.deadline - time.monotonic())
