"""A tombstone's ``keep_for_viewer`` is ``spared_viewer``: the member whose own blocks a
make-private spares, named as the forget's re-pin names them (``sparing_viewer``). A rename: no
data moves."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("pippa_memory", "0014_outbox_fewer_indexes")]

    operations = [
        migrations.RenameField(
            model_name="itemtombstone", old_name="keep_for_viewer", new_name="spared_viewer"
        )
    ]
