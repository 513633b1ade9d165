"""The admin's action log names a conversation as the admin now does: soul, vessel and date.

A conversation's title is its member's words (the first of their first message), and the log kept
it as each entry's ``object_repr``, shown to the acting staff account under *Recent actions*.
Entries about a conversation (or its pin, a proxy) are relabelled; one whose conversation is gone
says so. Nothing else in the log changes. Reversing it leaves the new labels.
"""

from django.core.exceptions import ValidationError
from django.db import migrations

DELETED = "a deleted conversation"


def relabel(apps, schema_editor):
    alias = schema_editor.connection.alias
    ContentType = apps.get_model("contenttypes", "ContentType")
    LogEntry = apps.get_model("admin", "LogEntry")
    Conversation = apps.get_model("webui", "Conversation")
    kinds = ContentType.objects.using(alias).filter(
        app_label__in=["webui", "pippa_memory"], model__in=["conversation", "conversationpin"]
    )
    entries = LogEntry.objects.using(alias).filter(content_type__in=kinds)
    for entry in entries.only("id", "object_id").iterator():
        try:
            found = (
                Conversation.objects.using(alias)
                .filter(pk=entry.object_id)
                .values("soul__name", "vessel__name", "created_at")
                .first()
            )
        except (ValueError, ValidationError):  # not a conversation's id: nothing to look up
            found = None
        label = (
            f"{found['soul__name']} via {found['vessel__name']} "
            f"({found['created_at']:%Y-%m-%d %H:%M})"
            if found
            else DELETED
        )
        LogEntry.objects.using(alias).filter(pk=entry.pk).update(object_repr=label)


class Migration(migrations.Migration):
    dependencies = [
        ("webui", "0011_vessel_call_keyed_section_hashes"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(relabel, migrations.RunPython.noop, elidable=True)]
