"""Every hash of member text the plug-in keeps is keyed (pippa_memory.member_text_hash), and the
item ids of blocks rendered for other members get a permission of their own.

Rows written before held plain sha256, which lets staff test guesses offline (a six-digit PIN in a
member's private memory falls in a second). A stored block and a stored bundle or brief keep their
text, so each is hashed afresh (HMAC-SHA256 under the key derived from SECRET_KEY); a pin record
or an unattended run naming one of those plain hashes gets its keyed hash, so they still match;
any other plain hash (a brain call's body, whose text is not kept) is keyed in place, as HMAC of
its hex, which the door still recognises for a replay. No text changes, so a pinned revision
renders the same bytes. The derivation is written out here, not imported, so that this
migration keeps doing what it did whatever the module becomes. Reversing it changes nothing back.
"""

import hashlib

from django.conf import settings
from django.db import migrations, models
from django.utils.crypto import salted_hmac

PURPOSE = "pippa_memory.member_text"
BATCH = 500


def keyed(data: str) -> str:
    return salted_hmac(
        PURPOSE, data.encode("utf-8"), secret=settings.SECRET_KEY, algorithm="sha256"
    ).hexdigest()


def plain(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rehash_texts(model, using: str, known: dict[str, str]) -> dict[int, str]:
    """Each row's hash made afresh from its text; ``known`` learns plain → keyed. Returns the
    keyed hash by conversation id, where the model has one."""
    by_conversation = {}
    rows = model.objects.using(using).only("id", "text", "sha256")
    changed = []
    for row in rows.iterator(chunk_size=BATCH):
        row.sha256 = known.setdefault(plain(row.text), keyed(row.text))
        by_conversation[getattr(row, "conversation_id", None)] = row.sha256
        changed.append(row)
        if len(changed) >= BATCH:
            model.objects.using(using).bulk_update(changed, ["sha256"])
            changed = []
    if changed:
        model.objects.using(using).bulk_update(changed, ["sha256"])
    return by_conversation


def key_plain_hashes(apps, schema_editor):
    using = schema_editor.connection.alias
    known: dict[str, str] = {}
    rehash_texts(apps.get_model("pippa_memory", "MemoryBlock"), using, known)
    carried = rehash_texts(apps.get_model("pippa_memory", "UnattendedMemory"), using, known)

    PinRecord = apps.get_model("pippa_memory", "PinRecord")
    for record in (
        PinRecord.objects.using(using)
        .exclude(sha256="")
        .only("id", "sha256")
        .iterator(chunk_size=BATCH)
    ):
        PinRecord.objects.using(using).filter(pk=record.pk).update(
            sha256=known.get(record.sha256) or keyed(record.sha256)
        )
    BrainCall = apps.get_model("pippa_memory", "BrainCall")
    for call in (
        BrainCall.objects.using(using)
        .exclude(body_sha256="")
        .only("id", "body_sha256")
        .iterator(chunk_size=BATCH)
    ):
        BrainCall.objects.using(using).filter(pk=call.pk).update(
            body_sha256=keyed(call.body_sha256)
        )
    UnattendedRun = apps.get_model("webui", "UnattendedRun")
    for run in (
        UnattendedRun.objects.using(using)
        .only("id", "memory", "conversation_id")
        .iterator(chunk_size=BATCH)
    ):
        memory = run.memory if isinstance(run.memory, dict) else {}
        if not memory.get("sha256"):
            continue
        memory["sha256"] = (
            carried.get(run.conversation_id)
            or known.get(memory["sha256"])
            or keyed(memory["sha256"])
        )
        UnattendedRun.objects.using(using).filter(pk=run.pk).update(memory=memory)


class Migration(migrations.Migration):
    dependencies = [
        ("pippa_memory", "0018_pin_record_cause"),
        ("webui", "0004_unattended_runs"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="memoryblock",
            options={
                "ordering": ["-fetched_at"],
                "permissions": [
                    (
                        "view_member_item_ids",
                        "Can see the item ids of memory blocks rendered for other members",
                    )
                ],
            },
        ),
        migrations.AlterField(
            model_name="memoryblock",
            name="sha256",
            field=models.CharField(
                help_text="Its text's keyed hash (HMAC-SHA256, pippa_memory.member_text_hash).",
                max_length=64,
            ),
        ),
        migrations.RunPython(key_plain_hashes, migrations.RunPython.noop, elidable=True),
    ]
