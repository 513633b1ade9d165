"""The ledger's section hashes are keyed (webui.ledger.section_hash): each row names its key.

Rows written before held plain sha256, which lets anyone who reads the ledger test a guessed
prompt offline. Their text is gone, so they cannot be hashed afresh; instead each plain hash is
keyed in place (HMAC-SHA256 of the sha256's hex, under the key derived from SECRET_KEY), and the
row is marked ``sha256/<key fingerprint>``, so no plain hash is left and the next call still
compares with the last row exactly (no drift is invented). The derivation is written out here,
not imported, so that this migration keeps doing what it did whatever the module becomes.
Reversing it drops the column; the rows keep their keyed hashes.
"""

from django.conf import settings
from django.db import migrations, models
from django.utils.crypto import salted_hmac

PURPOSE = "webui.ledger.section"
BATCH = 500


def key_plain_hashes(apps, schema_editor):
    VesselCall = apps.get_model("webui", "VesselCall")
    secret = settings.SECRET_KEY
    fingerprint = salted_hmac(f"{PURPOSE}.key-id", b"", secret=secret, algorithm="sha256")
    key_id = "sha256/" + fingerprint.hexdigest()[:16]
    rows = VesselCall.objects.using(schema_editor.connection.alias).filter(sections_key="")
    changed = []
    for row in rows.only("id", "sections").iterator(chunk_size=BATCH):
        row.sections = {
            name: salted_hmac(
                PURPOSE, str(plain).encode(), secret=secret, algorithm="sha256"
            ).hexdigest()
            for name, plain in (row.sections or {}).items()
        }
        row.sections_key = key_id
        changed.append(row)
        if len(changed) >= BATCH:
            rows.bulk_update(changed, ["sections", "sections_key"])
            changed = []
    if changed:
        rows.bulk_update(changed, ["sections", "sections_key"])


class Migration(migrations.Migration):
    dependencies = [
        ("webui", "0010_conversation_extension_flags"),
    ]

    operations = [
        migrations.AlterField(
            model_name="vesselcall",
            name="sections",
            field=models.JSONField(
                default=dict, help_text="Each stable section's name: its hash, keyed (HMAC-SHA256)."
            ),
        ),
        migrations.AddField(
            model_name="vesselcall",
            name="sections_key",
            field=models.CharField(
                blank=True,
                default="",
                help_text="Which key hashed the sections (a fingerprint; webui.ledger.section_hash).",
                max_length=32,
            ),
        ),
        migrations.RunPython(key_plain_hashes, migrations.RunPython.noop, elidable=True),
    ]
