"""The reference memory engine: a small real engine implementing engine contract v3 (and v2 for
older callers), its own package and process, importing nothing from the site.

Every memory, revision, event id, forget and ask is a row in its own database
(:mod:`.storage`: SQLite in WAL mode by default, PostgreSQL when configured; its schema is
versioned migrations), committed before the answer is sent; recall is ranked by a full-text
index. The WSGI app (:mod:`.app`) answers the contract routes (:mod:`.routes`) and, only when
started with ``--control``, the control door (:mod:`.control`: faults, direct writes, the request
log). ``python -m reference_engine`` (:mod:`.__main__`, settings in :mod:`.config`) serves it
under gunicorn (:mod:`.service`); :mod:`.server` serves the same app in-process for the tests.
"""
