"""The cache bill page: the ledger's cached share, drift and estimated cost, for staff.

Staff holding ``webui.view_vesselcall`` (the ledger's view permission, which the admin's *Vessel
calls* list needs too) see it; a member or a staff account without it gets 403, and anonymous
visitors are sent to the login page. It shows counts, hashes and causes, never prompt text, and
names conversations only as the admin does.
"""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from webui.conf import webui_settings
from webui.ledger.report import bill_by_conversation, bill_by_vessel, recent_drifts, total
from webui.web.navigation import NavigationLink

VIEW_LEDGER = "webui.view_vesselcall"

CACHE_LINK = NavigationLink(
    label="Cache", url_name="cache-ledger", staff_only=True, permission=VIEW_LEDGER
)


@login_required
def cache_ledger(request: HttpRequest) -> HttpResponse:
    """Per vessel and per conversation: the share of cacheable input read from the cache, the
    turns with drift and their cause, and what the cache saved or lost against no cache."""
    if not (request.user.is_staff and request.user.has_perm(VIEW_LEDGER)):
        raise PermissionDenied("The cache bill is for staff who may view the ledger.")
    vessels = bill_by_vessel()
    sources = [
        {"adapter": adapter, "source": entry.get("source", ""), "read_on": entry.get("read_on", "")}
        for adapter, entry in webui_settings.CACHE_PRICES.items()
    ]
    context = {
        "total": total(vessels),
        "vessels": vessels,
        "conversations": bill_by_conversation(),
        "drifts": recent_drifts(),
        "sources": sources,
    }
    return render(request, "webui/cache_ledger.html", context)
