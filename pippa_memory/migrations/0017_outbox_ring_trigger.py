"""On PostgreSQL, a trigger rings the outbox worker's doorbell at every insert into the outbox.

``NOTIFY`` is transactional: it is delivered when the inserting transaction commits (never for one
rolled back) and once per transaction however many rows it inserts. So a turn's event wakes the
delivery worker with no statement of its own, where an ``on_commit`` ``pg_notify`` cost the turn
a round trip to the database (:mod:`pippa_memory.outbox.doorbell`). Nothing is done on SQLite,
whose bell is a datagram.
"""

from django.db import migrations

#: The channel the worker LISTENs to (``pippa_memory.outbox.doorbell.CHANNEL``, fixed here as the
#: migration must not change if that module does).
CHANNEL = "pippa_memory_outbox"
FUNCTION = "pippa_memory_outbox_ring"


def create_trigger(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    table = quote(apps.get_model("pippa_memory", "OutboxEvent")._meta.db_table)
    schema_editor.execute(
        f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN PERFORM pg_notify('{CHANNEL}', ''); RETURN NULL; END $$"
    )
    schema_editor.execute(
        f"CREATE TRIGGER {FUNCTION} AFTER INSERT ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()"
    )


def drop_trigger(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    table = schema_editor.quote_name(apps.get_model("pippa_memory", "OutboxEvent")._meta.db_table)
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {FUNCTION} ON {table}")
    schema_editor.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}()")


class Migration(migrations.Migration):
    dependencies = [
        ("pippa_memory", "0016_brain_call_lease_and_exact_replay"),
    ]

    operations = [migrations.RunPython(create_trigger, drop_trigger)]
