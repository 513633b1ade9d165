"""Raise the questions-out flag on every conversation that has an ask still waiting, so that a turn
can learn it from the conversation row instead of a query of its own."""

from django.db import migrations

QUESTIONS_OUT = "pippa_memory.questions_out"


def raise_for_waiting_asks(apps, schema_editor):
    Conversation = apps.get_model("webui", "Conversation")
    PendingAsk = apps.get_model("pippa_memory", "PendingAsk")
    waiting = PendingAsk.objects.filter(answered_at__isnull=True).values_list(
        "conversation_id", flat=True
    )
    for conversation in Conversation.objects.filter(pk__in=waiting):
        flags = set(conversation.extension_flags or [])
        conversation.extension_flags = sorted(flags | {QUESTIONS_OUT})
        conversation.save(update_fields=["extension_flags"])


def lower_all(apps, schema_editor):
    Conversation = apps.get_model("webui", "Conversation")
    for conversation in Conversation.objects.exclude(extension_flags=[]):
        flags = set(conversation.extension_flags or []) - {QUESTIONS_OUT}
        conversation.extension_flags = sorted(flags)
        conversation.save(update_fields=["extension_flags"])


class Migration(migrations.Migration):
    dependencies = [
        ("pippa_memory", "0012_pending_ask_answer_rode_with"),
        ("webui", "0010_conversation_extension_flags"),
    ]

    operations = [migrations.RunPython(raise_for_waiting_asks, lower_all)]
