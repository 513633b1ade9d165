"""A small real HTTP server implementing engine contract v1, for development, demos and tests.

In-memory state (:mod:`.state`), a stdlib threading HTTP server (:mod:`.server`) with fault modes
switched at run time through ``/_control``. Start it with ``python manage.py memory_engine``.
"""

from pippa_memory.reference_engine.server import ReferenceEngine

__all__ = ["ReferenceEngine"]
