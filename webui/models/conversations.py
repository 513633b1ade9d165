"""Conversations: a member talking with a soul through a vessel, or an unattended run; and the
moves a member made of their chat to another vessel."""

import uuid

from django.conf import settings
from django.db import models, transaction
from django.urls import reverse

from webui.models.souls import Soul
from webui.models.vessels import Vessel


class Conversation(models.Model):
    """A viewer talking with a soul through a vessel, or an unattended run (a job or a wake)."""

    class Kind(models.TextChoices):
        CHAT = "chat", "Chat"
        JOB = "job", "Scheduled job"
        WAKE = "wake", "Soul Stream wake"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    soul = models.ForeignKey(Soul, on_delete=models.PROTECT, related_name="conversations")
    vessel = models.ForeignKey(Vessel, on_delete=models.PROTECT, related_name="conversations")
    viewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="conversations",
        help_text="The household member talking; empty for unattended runs.",
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.CHAT)
    title = models.CharField(max_length=200, blank=True)
    temporary = models.BooleanField(
        default=False, help_text="A temporary chat: no memory pin, no memory tool, no events."
    )
    pinned_head = models.CharField(  # noqa: DJ001  (null = never pinned; "" is not a revision)
        max_length=200,
        null=True,
        blank=True,
        help_text="Memory revision pinned at the first turn; empty with a pin time means pinned absent.",
    )
    pinned_at = models.DateTimeField(null=True, blank=True)
    vault_sha256 = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text="The vault base pinned at the first turn (a VaultSnapshot); later edits wait for "
        "the next conversation.",
    )
    offered_tools = models.JSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="Tool definitions fixed at the first turn, sent unchanged on every later turn.",
    )
    disclosure = models.TextField(
        blank=True,
        editable=False,
        help_text="The viewer disclosure pinned at the first turn: a rename reaches the next "
        "conversation, never a running one.",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The turn lock (webui.turns.lock): the turn answering in this conversation now, until when its
    # lease holds (a killed process's lock expires), and whether someone asked it to stop; the user
    # message it answers and the text of its vessel call so far, written by its heartbeat, so what
    # arrived before a crash is kept (marked interrupted) when the next turn claims the lock.
    running_turn_id = models.UUIDField(null=True, blank=True, editable=False)
    turn_lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    turn_stop_requested = models.BooleanField(default=False, editable=False)
    turn_message_id = models.UUIDField(null=True, blank=True, editable=False)
    turn_partial_text = models.TextField(blank=True, default="", editable=False)
    # Flags the installed extensions keep on the conversation, each named by its extension
    # ("<extension>.<flag>"), so that a turn learns them from the row it has loaded anyway.
    extension_flags = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        # Never the title: it is the member's own words (the first of their first message), and
        # the admin's lists, change, delete and history pages and its action log show this to
        # staff. Member pages show ``title`` itself.
        started = f"{self.created_at:%Y-%m-%d %H:%M}" if self.created_at else "not saved yet"
        return f"{self.soul} via {self.vessel} ({started})"

    def get_absolute_url(self) -> str:
        return reverse("conversation-detail", args=[self.id])

    def has_extension_flag(self, flag: str) -> bool:
        """Whether an extension's ``flag`` is raised, as the row was loaded: no query."""
        return flag in (self.extension_flags or [])

    def set_extension_flag(self, flag: str, *, raised: bool) -> None:
        """Raise or lower an extension's ``flag``, in the caller's transaction (so it changes
        together with the rows it stands for), under the row's lock so no flag of another is lost.
        Afterwards ``extension_flags`` is current."""
        with transaction.atomic():
            stored = (
                Conversation.objects.select_for_update()
                .filter(pk=self.pk)
                .values_list("extension_flags", flat=True)
                .first()
            )
            flags = set(stored or [])
            wanted = flags | {flag} if raised else flags - {flag}
            if wanted != flags:
                Conversation.objects.filter(pk=self.pk).update(extension_flags=sorted(wanted))
        self.extension_flags = sorted(wanted)


class VesselMove(models.Model):
    """A member moved their chat to another vessel (model): its next turn answers there. The cache
    ledger names the drift this causes ``moved_by_member``, a deliberate cause, not a defect."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="vessel_moves"
    )
    # Kept as a record only: deleting a vessel the chat has left keeps the move, unnamed.
    from_vessel = models.ForeignKey(Vessel, null=True, on_delete=models.SET_NULL, related_name="+")
    to_vessel = models.ForeignKey(Vessel, null=True, on_delete=models.SET_NULL, related_name="+")
    moved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    moved_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-moved_at", "-id"]

    def __str__(self) -> str:
        return f"{self.from_vessel} → {self.to_vessel} ({self.moved_at:%Y-%m-%d %H:%M})"
