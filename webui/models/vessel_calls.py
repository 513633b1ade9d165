"""The cache ledger's rows: one :class:`VesselCall` per call a conversation's turn made to its vessel.

A row holds counts and hashes only, never prompt text: what the provider reported as used (in one
shape, whatever its own field names), how long the stable prefix of the request was, a hash of
each of its sections keyed with the site's secret, and, when the prefix did not extend the
previous call's in the same conversation, which section moved first and why. :mod:`webui.ledger.recorder` writes them.

The model lives in its own module (``webui.models`` re-exports it) and names the host's models by
string, so neither module imports the other's names in a cycle.
"""

from django.db import models


class VesselCall(models.Model):
    """One vessel call of a conversation's turn (each tool round is a call of its own).

    ``input_tokens`` is the whole prompt as the provider counted it, the part read from its cache
    included; ``cache_read_tokens`` is that cached part, ``cache_write_tokens`` the part written to
    the cache by this call (providers that report none: 0). ``sections`` maps each section of the
    stable prefix (``tools``, ``vault``, ``memory``, ``disclosure``, ``history``, ``turn``) to the
    keyed hash of its bytes as the adapter serialised them, the per-turn slot and cache markers
    left out; ``sections_key`` names the key. ``drift_section`` is empty when the prefix extended
    the previous call's.
    """

    conversation = models.ForeignKey(
        "webui.Conversation", on_delete=models.CASCADE, related_name="vessel_calls"
    )
    user_message = models.ForeignKey(
        "webui.Message",
        on_delete=models.CASCADE,
        related_name="vessel_calls",
        help_text="The user message the turn answers.",
    )
    round = models.PositiveSmallIntegerField(
        help_text="0 for the turn's first call; n for the call after its n-th tool round."
    )
    vessel = models.ForeignKey(
        "webui.Vessel", null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    adapter = models.CharField(max_length=32)
    model = models.CharField(max_length=200, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    prefix_bytes = models.PositiveIntegerField(
        help_text="Length of the stable prefix in bytes (tools, system text and messages)."
    )
    sections = models.JSONField(
        default=dict, help_text="Each stable section's name: its hash, keyed (HMAC-SHA256)."
    )
    sections_key = models.CharField(
        max_length=32,
        blank=True,
        default="",
        help_text="Which key hashed the sections (a fingerprint; webui.ledger.section_hash).",
    )
    history_messages = models.PositiveIntegerField(
        default=0, help_text="How many provider messages the history section holds."
    )
    turn_messages = models.PositiveIntegerField(
        default=0,
        help_text="How many provider messages the turn section holds (the newest user text and "
        "the turn's rounds so far).",
    )
    drift_section = models.CharField(
        max_length=16, blank=True, help_text="The first section that moved; empty: no drift."
    )
    drift_cause = models.CharField(
        max_length=400, blank=True, help_text="Why it moved, where that is known."
    )
    stopped = models.BooleanField(
        default=False, help_text="The member stopped the reply mid-call: usage was not reported."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["conversation", "id"]
        indexes = [models.Index(fields=["conversation", "id"], name="vessel_call_by_conversation")]

    def __str__(self) -> str:
        return f"call {self.round} answering {self.user_message_id}"

    @property
    def drifted(self) -> bool:
        return bool(self.drift_section)
