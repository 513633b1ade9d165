"""The pinned head: a conversation's memory block, decided once and carried for life.

- :mod:`~pippa_memory.pins.head`: deciding a pin at the first turn (the engine's head, refused
  when it holds a tombstoned item) and pinning the conversation to it;
- :mod:`~pippa_memory.pins.blocks`: stored blocks, their envelope, the tombstone check of a block;
- :mod:`~pippa_memory.pins.turn_block`: the block each chat turn carries, settled before the
  prompt is assembled, with the process's cache of rendered blocks;
- :mod:`~pippa_memory.pins.repins`: re-pins at a later turn (engine recovered, block forgotten)
  and why a conversation is unpinned;
- :mod:`~pippa_memory.pins.records`: the two actions that write a pin with its pin record;
- :mod:`~pippa_memory.pins.tombstones` and :mod:`~pippa_memory.pins.forgetting`: a forget that
  reaches live pins.
"""
