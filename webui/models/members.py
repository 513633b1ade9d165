"""A member's own settings: the model their new chats start on and the time zone their pages
show times in. Their display name is Django's own (the account's name), not kept here."""

import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from webui.models.vessels import Vessel


def validate_time_zone(name: str) -> None:
    """An IANA time zone name this machine knows (``Europe/London``), or blank."""
    if name and name not in zoneinfo.available_timezones():
        raise ValidationError(f"“{name}” is not a time zone this server knows, e.g. Europe/London.")


class MemberSettings(models.Model):
    """One member's settings, made the first time they save their account page. With none (or a
    blank field) the household's own apply: its default model and ``DJANGO_TIME_ZONE``."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="member_settings"
    )
    default_vessel = models.ForeignKey(
        Vessel,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The model the member's new chats start on; empty: the household's default.",
    )
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_time_zone],
        help_text="IANA name (Europe/London) of the zone the member's pages show times in; "
        "empty: the household's (DJANGO_TIME_ZONE).",
    )

    class Meta:
        verbose_name_plural = "member settings"

    def __str__(self) -> str:
        return f"Settings of {self.user}"
