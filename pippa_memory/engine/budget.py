"""Each caller's own budget for the engine: the total seconds its engine calls may take.

Every call to :func:`~pippa_memory.engine.client.call_engine` names the time left in its caller's
budget, and no read of it waits past that time; none falls back on another caller's budget:

- a chat turn: ``CHAT_BUDGET`` shared by the turn's calls (the pin, the answers fetch), its clock
  starting at the first (:func:`pippa_memory.turn.state.remaining`), each read also at most ``READ_TIMEOUT``; the
  acknowledgement of the answers it carried, after its reply is saved, has a ``CHAT_BUDGET`` of
  its own;
- a memory tool call (recall, ask): ``TOOL_BUDGET``;
- a turn event's delivery: ``OUTBOX_DELIVERY_TIMEOUT``;
- an unattended run: ``UNATTENDED_BUDGET`` shared by its calls (a job's head and bundle, a wake's
  brief), which the engine curates through a vessel, so a brief that takes 10 s is a brief;
- a management call (the memory page and its API, forget): ``MANAGE_BUDGET`` each.

A down engine costs each caller one bounded wait at most, then nothing once the breaker opens.
"""

import time


def seconds_left(deadline: float) -> float:
    """Seconds from now until the monotonic ``deadline`` of a budget several calls share; 0 past
    it."""
    return max(0.0, deadline - time.monotonic())
