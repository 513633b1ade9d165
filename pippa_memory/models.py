"""The plug-in's records: pinned memory blocks and the history of every pin decision."""

import uuid
from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from webui.models import Conversation, Message, Soul


class Scope(models.TextChoices):
    """Who may see a memory item (engine contract v2)."""

    PRIVATE = "private", "Private (only the member who said it)"
    HOUSEHOLD = "household", "Household (everyone)"


class MemoryBlock(models.Model):
    """A soul's memory block at one engine revision, rendered for one viewer. Immutable: one row
    per (soul, revision, viewer), with the ids of the items it holds (so a forget finds the
    conversations whose pinned block holds the item)."""

    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="memory_blocks")
    revision = models.CharField(max_length=100)
    viewer = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The member id the block was rendered for; blank: household items only.",
    )
    text = models.TextField()
    sha256 = models.CharField(
        max_length=64,
        help_text="Its text's keyed hash (HMAC-SHA256, pippa_memory.member_text_hash).",
    )
    items = models.JSONField(default=list, blank=True, help_text="Ids of the items it holds.")
    fetched_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        permissions = [
            (
                "view_member_item_ids",
                "Can see the item ids of memory blocks rendered for other members",
            )
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["soul", "revision", "viewer"], name="memory_block_once_per_viewer"
            )
        ]
        ordering = ["-fetched_at"]

    def __str__(self) -> str:
        return f"{self.soul} @ {self.revision}" + (f" for {self.viewer}" if self.viewer else "")


class ItemTombstone(models.Model):
    """An item a member asked to forget (or made private), recorded before the engine is asked, so
    that a block the engine rendered before the change is never pinned. Ids only, never text.
    ``spared_viewer``: the owner of an item made private, whose own blocks may still hold it;
    blank for a forget (no block may hold it)."""

    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="item_tombstones")
    item_id = models.CharField(max_length=200)
    spared_viewer = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["soul", "item_id"], name="tombstone_soul_item")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.soul} {self.item_id}" + (
            f", private to {self.spared_viewer}" if self.spared_viewer else ""
        )


class MemberPreference(models.Model):
    """A member's own memory settings: the scope a ``remember`` gets when the model names none."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_preference"
    )
    default_scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.PRIVATE)

    class Meta:
        permissions = [
            (
                "manage_memory",
                "Can see each member's count of private memories, forget household memories, "
                "and forget all of one member's memories",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_default_scope_display()}"


class PinRecord(models.Model):
    """One pin decision: a pin, an absent pin (with why), or an admin's request to re-pin.

    ``reason`` keeps the precise words (the engine client's reason, an admin's own); ``cause``
    sorts it into one of :class:`Cause` (:func:`pippa_memory.pins.records.cause_of`), which the
    admin filters by and the conversation's memory panel puts in a family's words."""

    class Outcome(models.TextChoices):
        PINNED = "pinned", "Pinned"
        ABSENT = "absent", "Pinned absent"
        REPIN_REQUESTED = "repin_requested", "Re-pin requested"

    class Cause(models.TextChoices):
        # A pin.
        FIRST_PIN = "first_pin", "Pinned at its first turn"
        ENGINE_RECOVERED = "engine_recovered", "Pinned once the engine answered again"
        RETRIED = "retried", "Pinned at a later try after a refused block"
        # A re-pin asked for (or, for forgotten, done at once).
        FORGOTTEN = "forgotten", "A memory was forgotten"
        MADE_PRIVATE = "made_private", "A memory was made private"
        MEMBER_REFRESH = "member_refresh", "The member brought it up to date"
        ADMIN_REPIN = "admin_repin", "An admin asked to re-pin"
        # Absent by choice: for life.
        MEMORY_DISABLED = "memory_disabled", "Absent: memory switched off"
        TEMPORARY = "temporary", "Absent: a temporary chat"
        ENGINE_UNCONFIGURED = "engine_unconfigured", "Absent: no engine configured"
        # Absent because the engine could not be reached, or failed.
        UNREACHABLE = "unreachable", "Absent: the engine could not be reached"
        ENGINE_ERROR = "engine_error", "Absent: the engine answered with an error"
        # Absent because the engine answered with something that could not be used.
        BLOCK_TOO_LARGE = "block_too_large", "Absent: the block was too large"
        ANSWER_TOO_LARGE = "answer_too_large", "Absent: the engine's answer was too large"
        UNUSABLE_ANSWER = "unusable_answer", "Absent: the engine's answer could not be used"
        GONE = "gone", "Absent: the engine said the block is gone"
        STALE_BLOCK = "stale_block", "Absent: the block held a forgotten memory"
        REVISION_CONFLICT = "revision_conflict", "Absent: the engine reused a revision"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="pin_records"
    )
    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="pin_records")
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    revision = models.CharField(max_length=100, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    reason = models.CharField(
        max_length=300,
        blank=True,
        help_text="Why the pin is absent, or why a re-pin was asked for.",
    )
    cause = models.CharField(
        max_length=20,
        choices=Cause.choices,
        blank=True,
        help_text="The kind of reason, to filter by.",
    )
    tried_again_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="For an absent pin: when a later turn last asked the engine again, in vain.",
    )
    engine_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The admin who asked for a re-pin.",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_outcome_display()} {self.revision or self.reason}"


class ConversationPin(Conversation):
    """A conversation seen through its pin, for the admin (a proxy: no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "conversation pin"
        verbose_name_plural = "conversation pins"
        permissions = [("repin_conversation", "Can ask a conversation to re-pin at its next turn")]


class OutboxQuerySet(models.QuerySet["OutboxEvent"]):
    def due(self, now: datetime) -> "OutboxQuerySet":
        """Pending events whose next attempt time has come."""
        return self.filter(status=OutboxEvent.Status.PENDING, next_attempt_at__lte=now)

    def dead(self) -> "OutboxQuerySet":
        return self.filter(status=OutboxEvent.Status.DEAD)

    def undelivered(self, *, include_dead: bool) -> "OutboxQuerySet":
        """Pending events, and with ``include_dead`` dead ones too."""
        statuses = [OutboxEvent.Status.PENDING]
        if include_dead:
            statuses.append(OutboxEvent.Status.DEAD)
        return self.filter(status__in=statuses)

    def make_due(self, *, now: datetime) -> int:
        """Make these events pending and due at ``now``, their retry window restarting there (an
        operator's *retry now* or *revive*); returns how many."""
        return self.update(status=OutboxEvent.Status.PENDING, next_attempt_at=now, revived_at=now)


class OutboxEvent(models.Model):
    """A ``conversation.turn`` event waiting to reach the engine, written with the turn it reports.

    The row is the guarantee, and the queue: it is written in the same transaction as the
    assistant message, so a committed turn always has its event and a rolled-back one never does,
    and the delivery worker claims it by ``(status, next_attempt_at)``
    (:mod:`pippa_memory.outbox.queue`). Delivery is at least once, with the event id as the
    ``Idempotency-Key``.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        DEAD = "dead", "Dead"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event_type = models.CharField(max_length=50, default="conversation.turn")
    # Every index is written at every turn: only those the outbox is read by are kept (the
    # claim's, the conversation's pending events, the one event per message).
    soul = models.ForeignKey(
        Soul, on_delete=models.CASCADE, related_name="outbox_events", db_index=False
    )
    conversation_id = models.UUIDField(db_index=True)
    message_id = models.UUIDField(unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_error = models.TextField(blank=True)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    revived_at = models.DateTimeField(
        null=True, blank=True, help_text="When an operator made it pending again; retries restart."
    )

    objects = OutboxQuerySet.as_manager()

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="outbox_due_idx")]
        permissions = [("retry_outboxevent", "Can retry outbox events now or revive dead ones")]

    def __str__(self) -> str:
        return f"{self.event_type} {self.id} ({self.status})"


class PendingAsk(models.Model):
    """A question the memory tool handed to the engine, waiting for its answer to ride a turn.

    Once the answer rides a turn, it is kept here with the reply whose per-turn slot carried it
    (written in that reply's transaction), so the chat page can show it under the reply to the
    conversation's member. It is never written into the conversation (its messages, the prompt
    history, the turn event), and it goes with the conversation.
    """

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="pending_asks"
    )
    ask_id = models.CharField(max_length=200, unique=True)
    question = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(
        null=True, blank=True, help_text="When its answer was delivered and acknowledged."
    )
    answer = models.TextField(
        blank=True, help_text="The engine's answer, once it rode a turn (for the page only)."
    )
    delivered_with = models.ForeignKey(
        Message,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The reply whose per-turn slot first carried the answer.",
    )

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["conversation", "answered_at"], name="pending_ask_idx")]

    def __str__(self) -> str:
        # No question here: it is the member's words, and the admin's delete page lists this.
        return f"ask {self.ask_id}"


class BrainCall(models.Model):
    """One call to the brain door: the audit row, and for signed calls the stored answer that a
    repeated ``webhook-id`` gets back. Never holds a secret."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        ANSWERED = "answered", "Answered"
        INVALID = "invalid", "Invalid request"
        UNAUTHORIZED = "unauthorized", "Unauthorized"
        TOO_LARGE = "too_large", "Body too large"
        UNSUPPORTED = "unsupported_media_type", "Unsupported media type"
        THROTTLED = "throttled", "Throttled"
        VESSEL_FAILED = "vessel_failed", "Vessel failed"
        SCHEMA_VIOLATION = "schema_violation", "Answer violated the schema"
        TIMEOUT = "vessel_timeout", "Vessel timed out"
        UNAVAILABLE = "unavailable", "Door unavailable"
        CONFLICT = "conflict", "Replay conflict"
        LENGTH_REQUIRED = "length_required", "Length required"
        FAILED = "failed", "Failed unexpectedly"

    request_id = models.CharField(max_length=32, unique=True)
    webhook_id = models.CharField(max_length=255, unique=True, null=True, blank=True)
    body_sha256 = models.CharField(max_length=64, blank=True)
    role = models.CharField(max_length=20, blank=True)
    soul = models.CharField(max_length=50, blank=True)
    vessel = models.CharField(max_length=50, blank=True)
    model = models.CharField(max_length=200, blank=True)
    outcome = models.CharField(max_length=30, choices=Outcome.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # The answer exactly as the first call sent it (JSON text; a NUL is its escape, "\\u0000"),
    # so a replay returns the same bytes.
    response_body = models.TextField(null=True, blank=True)  # noqa: DJ001 (null: no answer kept)
    # While running: until when the call holds its webhook-id (renewed as it runs; lapsed means
    # the process that held it is gone, and a replay may run it again).
    lease_until = models.DateTimeField(null=True, blank=True)
    repaired = models.BooleanField(default=False)
    # Every vessel attempt, in order: vessel, model, outcome ("answered" or "failed", with the
    # error code and message), usage; the answered one also says repaired and synthetic.
    attempts = models.JSONField(default=list, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.role or '?'} {self.outcome} ({self.request_id})"


class UnattendedMemory(models.Model):
    """What an unattended run carried: a job's deterministic bundle or a wake's curated brief."""

    class Source(models.TextChoices):
        BUNDLE = "bundle", "Bundle"
        BRIEF = "brief", "Brief"

    conversation = models.OneToOneField(
        Conversation, on_delete=models.CASCADE, related_name="unattended_memory"
    )
    source = models.CharField(max_length=10, choices=Source.choices)
    revision = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.source} {self.revision}"
