"""Create the database cache's table (the default ``WEBUI_CACHE_URL``) as part of ``migrate``.

The brain door and its throttles count in that cache; a deployment that migrated but never ran
``createcachetable`` would answer 500 there. ``createcachetable`` skips caches that are not
database caches and tables that exist, so this is safe to run anywhere, and again.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [
        ("webui", "0006_daily_chores"),
    ]

    operations = [
        migrations.RunPython(create_cache_table, migrations.RunPython.noop, elidable=True),
    ]
