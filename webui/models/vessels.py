"""Vessels: the household's configured LLM backends."""

import logging
import os
import re
from collections.abc import Collection

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, URLValidator
from django.db import DatabaseError, models
from django.urls import reverse
from django.utils import timezone

logger = logging.getLogger(__name__)

#: Each ``Vessel.adapter`` value and how the vessel form names it, in the order the form lists them.
#: The registry (:mod:`webui.vessels.registry`) files each adapter class under one of these names
#: and refuses to load when the two disagree, so adding a provider is one adapter module, one line
#: in the registry and one line here.
ADAPTER_LABELS: dict[str, str] = {
    "anthropic": "Anthropic Messages",
    "openai": "OpenAI Chat Completions",
    "openai_responses": "OpenAI Responses",
    "gemini": "Google Gemini",
    "ollama": "Ollama",
    "openai_compatible": "OpenAI-compatible server",
    "offline": "Offline (no network)",
}

#: The environment variables that may hold a vessel's API key (the vessel stores only the name).
KEY_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*(KEY|TOKEN)[A-Z0-9_]*$")
# The project's own secrets: a vessel naming one of these would send it to the provider as a key.
RESERVED_ENV_PREFIXES = ("DJANGO_", "PIPPA_", "DATABASE_", "WEBUI_")


def adapter_choices() -> list[tuple[str, str]]:
    """``(value, label)`` for each adapter, in order: the ``Vessel.adapter`` field's choices."""
    return list(ADAPTER_LABELS.items())


def api_key_env_problem(name: str) -> str | None:
    """Why ``name`` cannot hold a vessel's key, or ``None``."""
    if name.startswith(RESERVED_ENV_PREFIXES):
        return f"{name} belongs to the project's own settings and cannot hold a vessel's key."
    if not KEY_ENV_NAME.match(name):
        return (
            f"{name} is not a key variable name: use capitals, digits and underscores, with KEY or "
            "TOKEN in it (for example ANTHROPIC_API_KEY)."
        )
    return None


def validate_api_key_env(name: str) -> None:
    problem = api_key_env_problem(name)
    if problem:
        raise ValidationError(problem)


class Vessel(models.Model):
    """One configured LLM backend: an adapter kind, a model, an endpoint and the env var of its key.

    ``household_default`` is the admin's explicit choice of the model a new chat starts on (at
    most one vessel holds it; none until an admin chooses, so a vessel never becomes it by being
    added). ``last_outcome`` is how its last Test connection or turn call went, so the pages call
    a vessel ready only once a call has worked; ``last_problem`` keeps the failure's technical
    detail for the admin, never for a member's page.
    """

    class Outcome(models.TextChoices):
        UNTRIED = "", "Not tried yet"
        ANSWERED = "answered", "Answered"
        FAILED = "failed", "Failed"

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
    household_default = models.BooleanField(
        default=False,
        help_text="The model a member's new chat starts on, unless they chose their own default. "
        "At most one vessel; ticking it here takes it from the one that had it.",
    )
    last_outcome = models.CharField(
        max_length=8, choices=Outcome.choices, blank=True, default=Outcome.UNTRIED, editable=False
    )
    last_outcome_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_problem = models.TextField(
        blank=True,
        default="",
        editable=False,
        help_text="What the provider said when the last call failed (for the admin only).",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["household_default"],
                condition=models.Q(household_default=True),
                name="one_household_default_vessel",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """Its row on the vessels page, which every member reads."""
        return reverse("vessel-list") + f"#vessel-{self.slug}"

    def validate_constraints(self, exclude: Collection[str] | None = None) -> None:
        """Django's checks, except that ticking *Household default* on a second vessel is no
        error: saving it takes the default from the vessel that had it, in one transaction
        (the admin's ``save_model``); the database's constraint still allows only one."""
        super().validate_constraints(exclude={*(exclude or ()), "household_default"})

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

    @property
    def answered_last(self) -> bool:
        """Whether its last Test connection or turn call worked (never tried: no)."""
        return self.last_outcome == self.Outcome.ANSWERED

    def record_outcome(self, *, answered: bool, problem: str = "") -> None:
        """Keep how a call to this vessel just went: answered, or failed with ``problem`` (the
        provider's detail, for the admin). Written only when it changes what is kept, so a
        household chatting on a working vessel does not write its row at every turn."""
        outcome = self.Outcome.ANSWERED if answered else self.Outcome.FAILED
        problem = "" if answered else problem
        if (self.last_outcome, self.last_problem) == (outcome, problem):
            return
        at = timezone.now()
        try:
            Vessel.objects.filter(pk=self.pk).update(
                last_outcome=outcome, last_problem=problem, last_outcome_at=at
            )
        except DatabaseError:
            # A note on the Models page must never cost a reply: a locked or failing database
            # leaves it as it was, and the next call writes it again.
            logger.warning("Vessel %s: its last outcome could not be kept now", self.slug)
            return
        self.last_outcome, self.last_problem, self.last_outcome_at = outcome, problem, at
