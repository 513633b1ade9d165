"""The language memories are written in (``PIPPA_ENGINE_LANGUAGE``): it chooses the stemmer and
the stop words of recall by words.

On PostgreSQL it is a text-search configuration (``english``, ``french``, ``german``...; see
``\\dF`` in psql): a trigger writes each item's ``tsv`` with the one ``engine_meta``'s
``text_language`` names, so a start with another language names it there and re-indexes every
item, in one transaction. SQLite's FTS5 stems with Porter, which is English only: another language there is a
clear error at start, and nothing changes.
"""

from reference_engine.storage.database import Database


class UnknownLanguage(ValueError):
    """A language the database cannot stem."""


def use_language(database: Database, language: str) -> None:
    """Make the full-text index stem in ``language``; :class:`UnknownLanguage` when it cannot."""
    if not database.postgres:
        if language != "english":
            raise UnknownLanguage(
                f"PIPPA_ENGINE_LANGUAGE={language} needs PostgreSQL: SQLite's stemmer (porter) "
                "is English only"
            )
        return
    with database.write() as cursor:
        known = cursor.run("SELECT 1 FROM pg_ts_config WHERE cfgname = ?", [language]).one()
        if known is None:
            raise UnknownLanguage(
                f"PIPPA_ENGINE_LANGUAGE={language} is not a text-search configuration of this "
                "PostgreSQL (see \\dF in psql)"
            )
        row = cursor.run("SELECT value FROM engine_meta WHERE name = 'text_language'").one()
        if row is not None and row[0] == language:
            return
        cursor.run(
            "INSERT INTO engine_meta (name, value) VALUES ('text_language', ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [language],
        )
        cursor.run("UPDATE engine_items SET tsv = to_tsvector(?::regconfig, text)", [language])
