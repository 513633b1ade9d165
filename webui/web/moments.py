"""A moment on a member's page, in one format and in their own time zone (the zone
:class:`~webui.web.time_zones.MemberTimeZoneMiddleware` activated for the request)."""

from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.formats import date_format


def when_words(moment: datetime, *, now: datetime | None = None) -> str:
    """``moment`` as a sentence reads it: "at 17:40" today, "yesterday at 17:40", "on 3 Dec at
    17:40" this year, "on 3 Dec 2025 at 17:40" before; always 24-hour, in the active zone."""
    local = timezone.localtime(moment)
    today = timezone.localtime(now or timezone.now()).date()
    clock = f"at {local:%H:%M}"
    if local.date() == today:
        return clock
    if local.date() == today - timedelta(days=1):
        return f"yesterday {clock}"
    day = date_format(local, "j M" if local.year == today.year else "j M Y")
    return f"on {day} {clock}"
