"""A small real HTTP server implementing engine contract v2, for development, demos and tests.

In-memory state (:mod:`.state`, one soul's items and revisions in :mod:`.souls`, what a turn
event leaves in :mod:`.events`), a stdlib threading HTTP server (:mod:`.server`) answering the
contract routes (:mod:`.routes`), with fault modes (:mod:`.faults`) switched at run time through
the control door (:mod:`.control`). Start it with ``python manage.py memory_engine``.
"""

from reference_engine.server import ReferenceEngine

__all__ = ["ReferenceEngine"]
