"""The reference engine's storage: its own database (:mod:`.database`, tables in :mod:`.schema`),
memories (:mod:`.memories`), ranked recall (:mod:`.ranking`), revisions (:mod:`.revisions`),
taking in turn events (:mod:`.ingest`) and events and asks (:mod:`.asks`). Plain SQL through
sqlite3 or psycopg, never Django's ORM.
"""
