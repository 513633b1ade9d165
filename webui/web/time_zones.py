"""Times on a member's pages in their own time zone: the zone their account page names
(:class:`~webui.models.MemberSettings`), else the household's (``DJANGO_TIME_ZONE``)."""

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from webui.models import MemberSettings


def member_time_zone(user: object) -> zoneinfo.ZoneInfo | None:
    """The zone ``user`` chose, or ``None`` for the household's (no choice, or not logged in)."""
    if not getattr(user, "is_authenticated", False):
        return None
    name = MemberSettings.objects.filter(user_id=user.pk).values_list("time_zone", flat=True)
    chosen = name.first()
    try:
        return zoneinfo.ZoneInfo(chosen) if chosen else None
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None  # a zone this machine no longer knows: the household's


class MemberTimeZoneMiddleware:
    """Activates the member's zone for the request (templates' ``date`` filter,
    ``timezone.localtime``); every request sets it afresh, so a thread never carries it over."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = member_time_zone(getattr(request, "user", None))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        return self.get_response(request)
