"""Messages, and the tool rounds of a turn whose reply is not saved yet."""

import uuid

from django.db import models

from webui.models.conversations import Conversation
from webui.models.vessels import Vessel


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
    reply_to = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="reply",
        help_text="The user message this assistant row answers; a message has at most one reply.",
    )
    stopped = models.BooleanField(
        default=False, help_text="The member stopped the reply: the text is what had arrived."
    )
    interrupted = models.BooleanField(
        default=False,
        help_text="The process writing the reply ended before it finished (killed, or shut down): "
        "the text is what had arrived.",
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
                condition=models.Q(role="assistant") | models.Q(reply_to__isnull=True),
                name="message_only_replies_reply_to",
            ),
        ]

    def __str__(self) -> str:
        # No text here: the admin's lists, delete pages and change log show this to all staff.
        return f"{self.role} message #{self.sequence}"

    def save(self, *args, **kwargs) -> None:
        """Give a new row the next position in its conversation before it is written.

        A row is never changed once written (processes cache history as append-only,
        :mod:`webui.prompt.history`); the admin shows messages read only.
        """
        if self.sequence is None:
            last = (
                Message.objects.filter(conversation_id=self.conversation_id)
                .aggregate(last=models.Max("sequence"))
                .get("last")
            )
            self.sequence = (last or 0) + 1
        super().save(*args, **kwargs)


class TurnRound(models.Model):
    """A tool round of a turn whose reply is not saved yet, saved as soon as the round finished.

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
