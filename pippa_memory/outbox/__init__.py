"""The turn event's transactional outbox: the row, its queue, delivery, the worker and its doorbell."""
