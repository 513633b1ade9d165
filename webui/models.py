"""The household's data: souls, vessels, conversations and their messages."""

import os
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, URLValidator
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

from webui.history import forget as forget_history
from webui.schedules import validate_schedule
from webui.vessels.key_env import api_key_env_problem
from webui.vessels.registry import adapter_choices


class Soul(models.Model):
    """A persona whose identity lives in an Obsidian vault folder."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    vault_path = models.CharField(
        max_length=500,
        help_text="Folder of the soul's Obsidian vault; a relative path is read from the project folder.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


def validate_api_key_env(name: str) -> None:
    problem = api_key_env_problem(name)
    if problem:
        raise ValidationError(problem)


class Vessel(models.Model):
    """One configured LLM backend: an adapter kind, a model, an endpoint and the env var of its key."""

    #: One member per registered adapter (``Vessel.Adapter.OFFLINE`` is ``"offline"``), built
    #: from the adapters' own names and labels.
    Adapter = models.TextChoices(
        "Adapter", [(value.upper(), (value, label)) for value, label in adapter_choices()]
    )

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    adapter = models.CharField(max_length=32, choices=Adapter.choices)
    model = models.CharField(max_length=200, blank=True)
    # A CharField with a URL validator: local servers are plain http, and a scheme is required.
    base_url = models.CharField(
        max_length=200,
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="Blank uses the provider's default endpoint.",
    )
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_api_key_env],
        help_text="Name of the environment variable that holds the API key (never the key itself).",
    )
    memory_tool_enabled = models.BooleanField(
        default=True, help_text="Offer the memory tool in conversations started on this vessel."
    )
    brain_priority = models.IntegerField(
        null=True,
        blank=True,
        help_text="Order in which the memory engine may borrow this vessel; blank means never.",
    )
    enabled = models.BooleanField(default=True)
    max_output_tokens = models.PositiveIntegerField(
        default=1024, help_text="Longest answer, in tokens, the vessel is asked for."
    )
    connect_timeout = models.FloatField(
        validators=[MinValueValidator(0.1)],
        default=5.0,
        help_text="Seconds to wait for the provider to accept the connection.",
    )
    read_timeout = models.FloatField(
        validators=[MinValueValidator(0.1)],
        default=60.0,
        help_text="Seconds to wait for each read from the provider.",
    )
    deadline = models.FloatField(
        validators=[MinValueValidator(0.1)],
        default=120.0,
        help_text="Seconds one call may take in all, retries included; a slow drip is cut off here.",
    )
    max_retries = models.PositiveSmallIntegerField(
        default=2, help_text="Retries after a failure that may pass (rate limit, overload, 5xx)."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """Its row on the vessels page, which every member reads."""
        return reverse("vessel-list") + f"#vessel-{self.slug}"

    @property
    def api_key(self) -> str:
        """The key from the environment variable the vessel names; empty when unset or not allowed.

        Whitespace around the key is dropped (a pasted newline would otherwise end up in a header).
        """
        if not self.api_key_env or api_key_env_problem(self.api_key_env):
            return ""
        return os.environ.get(self.api_key_env, "").strip()

    @property
    def api_key_present(self) -> bool:
        return bool(self.api_key)


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
    # The turn lock (webui.turn_lock): the turn answering in this conversation now, until when its
    # lease holds (a killed process's lock expires), and whether someone asked it to stop.
    running_turn_id = models.UUIDField(null=True, blank=True, editable=False)
    turn_lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    turn_stop_requested = models.BooleanField(default=False, editable=False)
    # Flags the installed extensions keep on the conversation, each named by its extension
    # ("<extension>.<flag>"), so that a turn learns them from the row it has loaded anyway.
    extension_flags = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title or f"{self.soul} via {self.vessel} ({self.created_at:%Y-%m-%d %H:%M})"

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


class VaultSnapshot(models.Model):
    """A soul's rendered vault base as a conversation first read it. Immutable per content."""

    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="vault_snapshots")
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["soul", "sha256"], name="vault_snapshot_once")
        ]

    def __str__(self) -> str:
        return f"{self.soul} vault {self.sha256[:12]}"


def empty_usage() -> dict:
    return {
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
    }


class Message(models.Model):
    """One user or assistant turn; an assistant row keeps its tool uses and the vessel's usage."""

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    tool_uses = models.JSONField(
        default=list, blank=True, help_text='List of {"id", "name", "input", "output"}.'
    )
    rounds = models.JSONField(
        default=list,
        blank=True,
        help_text=(
            'Tool rounds in order, each {"text", "tool_use_ids"}: what the vessel said beside its tool '
            "calls, kept so later turns replay the round byte for byte."
        ),
    )
    usage = models.JSONField(default=empty_usage, blank=True)
    vessel = models.ForeignKey(
        Vessel, null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    answers = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="answer",
        help_text="The user message this assistant row answers; a message has at most one answer.",
    )
    stopped = models.BooleanField(
        default=False, help_text="The member stopped the reply: the text is what had arrived."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # A monotonically increasing position inside the conversation; created_at alone can tie.
    sequence = models.PositiveIntegerField(editable=False)

    class Meta:
        ordering = ["conversation", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "sequence"], name="message_unique_sequence"
            ),
            models.CheckConstraint(
                condition=models.Q(role="assistant") | models.Q(answers__isnull=True),
                name="message_only_replies_answer",
            ),
        ]

    def __str__(self) -> str:
        # No text here: the admin's lists, delete pages and change log show this to all staff.
        return f"{self.role} message #{self.sequence}"

    def save(self, *args, **kwargs) -> None:
        """Give a new row the next position in its conversation before it is written."""
        if self.sequence is None:
            last = (
                Message.objects.filter(conversation_id=self.conversation_id)
                .aggregate(last=models.Max("sequence"))
                .get("last")
            )
            self.sequence = (last or 0) + 1
        elif not self._state.adding:
            # History is kept per process as append-only (webui.history): a row saved again
            # must be read afresh.
            forget_history(self.conversation_id)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs) -> tuple[int, dict[str, int]]:
        """Delete the row, and what this process kept of its conversation's history."""
        forget_history(self.conversation_id)
        return super().delete(*args, **kwargs)


class TurnRound(models.Model):
    """A tool round of a turn whose reply is not saved yet, kept as soon as the round finished.

    A later round's failure leaves these rows, and the retry replays them to the vessel instead of
    running their tools again. The reply's save moves them onto the assistant row and deletes
    them, in one transaction. ``tool_uses`` has the shape of ``Message.tool_uses``.
    """

    user_message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="saved_rounds")
    index = models.PositiveSmallIntegerField(help_text="0 for the turn's first round.")
    text = models.TextField(blank=True)
    tool_uses = models.JSONField(default=list, blank=True)
    usage = models.JSONField(default=empty_usage, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_message", "index"]
        constraints = [
            models.UniqueConstraint(fields=["user_message", "index"], name="turn_round_once")
        ]

    def __str__(self) -> str:
        return f"round {self.index} answering {self.user_message_id}"


class ScheduledJob(models.Model):
    """An unattended run on a schedule: a job (its prompt answered by a soul) or a Soul Stream wake."""

    class Kind(models.TextChoices):
        JOB = "job", "Scheduled job"
        WAKE = "wake", "Soul Stream wake"

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.JOB)
    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="scheduled_jobs")
    vessel = models.ForeignKey(Vessel, on_delete=models.PROTECT, related_name="scheduled_jobs")
    prompt = models.TextField(
        blank=True, help_text="What the soul is asked; a wake without one gets the standard ask."
    )
    schedule = models.CharField(
        max_length=100,
        validators=[validate_schedule],
        help_text="An interval such as 'every 15m' (s, m, h or d) or a cron expression '0 7 * * *'.",
    )
    enabled = models.BooleanField(default=True)
    next_run_at = models.DateTimeField(
        default=timezone.now, db_index=True, help_text="When the runner starts it next."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class UnattendedRun(models.Model):
    """One run with no human in it: a scheduled job or a Soul Stream wake, and how it went."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=8, choices=ScheduledJob.Kind.choices)
    job = models.ForeignKey(
        ScheduledJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="unattended_runs")
    conversation = models.OneToOneField(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.RUNNING)
    error = models.TextField(blank=True)
    memory = models.JSONField(
        default=dict,
        blank=True,
        help_text="What memory the run carried (bundle or brief, revision, sha256) or why none.",
    )
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.soul} at {self.started_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        """Its post on the Soul Stream, which every member reads."""
        return reverse("soul-stream") + f"#run-{self.pk}"


class DailyChore(models.Model):
    """Upkeep the scheduler runs once per local calendar day (``prune``), and how it last went.

    ``last_day`` is taken before the chore runs, so a restarted scheduler neither runs it twice on
    one day nor skips a day it was up for.
    """

    name = models.SlugField(max_length=50, unique=True)
    last_day = models.DateField(null=True, blank=True, help_text="The day it last ran (local).")
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty while it runs, or if it stopped half-way."
    )
    last_result = models.JSONField(
        default=dict, blank=True, help_text="What it did: rows deleted by kind, or the error."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# The cache ledger's model lives in a module of its own (it names these models by string).
from webui.vessel_calls import VesselCall  # noqa: E402

__all__ = [
    "Conversation",
    "DailyChore",
    "Message",
    "ScheduledJob",
    "Soul",
    "TurnRound",
    "UnattendedRun",
    "VaultSnapshot",
    "Vessel",
    "VesselCall",
]
