"""Each pin record gets its ``cause``: the kind of its reason, with choices, so the admin filters
by it and the member's panel says it in a family's words; and, for an absent pin,
``tried_again_at``. Existing records get their cause from their reason (the mapping as it stood
when this was written, frozen here); no reason is changed or lost."""

from django.db import migrations, models

CAUSE_OF_ABSENT_REASON = {
    "connection_failed": "unreachable",
    "timeout": "unreachable",
    "breaker_open": "unreachable",
    "request_failed": "unreachable",
    "http_error": "engine_error",
    "redirect": "engine_error",
    "http_408": "engine_error",
    "http_429": "engine_error",
    "http_410": "gone",
    "too_large": "answer_too_large",
    "wrong_shape": "unusable_answer",
    "invalid_json": "unusable_answer",
    "unencodable_text": "unusable_answer",
    "wrong_soul": "unusable_answer",
    "wrong_viewer": "unusable_answer",
    "memory_disabled": "memory_disabled",
    "temporary": "temporary",
    "engine_unconfigured": "engine_unconfigured",
    "block_too_large": "block_too_large",
    "stale_block": "stale_block",
    "revision_conflict": "revision_conflict",
}
PINNED_REASONS = {"engine_recovered", "forgotten"}
REQUESTED_REASONS = {"forgotten", "made_private", "member_refresh"}


def cause_of(outcome: str, reason: str) -> str:
    if outcome == "pinned":
        return reason if reason in PINNED_REASONS else "first_pin"
    if outcome == "repin_requested":
        return reason if reason in REQUESTED_REASONS else "admin_repin"
    return CAUSE_OF_ABSENT_REASON.get(reason, "engine_error")


def fill_causes(apps, schema_editor):
    PinRecord = apps.get_model("pippa_memory", "PinRecord")
    pairs = PinRecord.objects.order_by().values_list("outcome", "reason").distinct()
    for outcome, reason in pairs.iterator():
        PinRecord.objects.filter(outcome=outcome, reason=reason).update(
            cause=cause_of(outcome, reason)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("pippa_memory", "0017_outbox_ring_trigger"),
    ]

    operations = [
        migrations.AddField(
            model_name="pinrecord",
            name="cause",
            field=models.CharField(
                blank=True,
                choices=[
                    ("first_pin", "Pinned at its first turn"),
                    ("engine_recovered", "Pinned once the engine answered again"),
                    ("retried", "Pinned at a later try after a refused block"),
                    ("forgotten", "A memory was forgotten"),
                    ("made_private", "A memory was made private"),
                    ("member_refresh", "The member brought it up to date"),
                    ("admin_repin", "An admin asked to re-pin"),
                    ("memory_disabled", "Absent: memory switched off"),
                    ("temporary", "Absent: a temporary chat"),
                    ("engine_unconfigured", "Absent: no engine configured"),
                    ("unreachable", "Absent: the engine could not be reached"),
                    ("engine_error", "Absent: the engine answered with an error"),
                    ("block_too_large", "Absent: the block was too large"),
                    ("answer_too_large", "Absent: the engine's answer was too large"),
                    ("unusable_answer", "Absent: the engine's answer could not be used"),
                    ("gone", "Absent: the engine said the block is gone"),
                    ("stale_block", "Absent: the block held a forgotten memory"),
                    ("revision_conflict", "Absent: the engine reused a revision"),
                ],
                help_text="The kind of reason, to filter by.",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="pinrecord",
            name="tried_again_at",
            field=models.DateTimeField(
                blank=True,
                help_text="For an absent pin: when a later turn last asked the engine again, in vain.",
                null=True,
            ),
        ),
        migrations.RunPython(fill_causes, migrations.RunPython.noop, elidable=True),
    ]
