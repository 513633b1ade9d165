"""The health page for the household's staff, its JSON for monitoring, and ``/health/`` for a
load balancer.

``/status/`` (staff) shows each line in a sentence and a colour, with what to do when it is not
green; ``/status.json`` (staff) the same lines as JSON. ``/health/`` answers anyone with 200
``ok`` when the site can serve (its database answers) and 503 ``unavailable`` when it cannot,
and no details: what runs where is for staff. A member gets 403, anonymous visitors the login.
"""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache

from webui.health.lines import all_lines, database_line, overall_state
from webui.web.navigation import NavigationLink

HEALTH_LINK = NavigationLink(label="Health", url_name="health-page", staff_only=True)
COLOURS = {"ok": "green", "warning": "amber", "failing": "red", "off": "grey"}


def staff_only(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("The health page is for the household's staff.")


@never_cache
@login_required
def health_page(request: HttpRequest) -> HttpResponse:
    """Every line, worst first within its place, each with its colour and what to do."""
    staff_only(request)
    lines = all_lines()
    context = {
        "lines": [(line, COLOURS.get(line.state, "grey")) for line in lines],
        "overall": overall_state(lines),
        "checked_at": timezone.localtime(),
    }
    return render(request, "webui/health.html", context)


@never_cache
@login_required
def health_json(request: HttpRequest) -> JsonResponse:
    """The page's lines as JSON: ``{"status", "checked_at", "lines": [{"key", "title", "state",
    "colour", "sentence", "what_to_do", "details"}]}``."""
    staff_only(request)
    lines = all_lines()
    return JsonResponse(
        {
            "status": overall_state(lines),
            "checked_at": timezone.now().isoformat(),
            "lines": [
                {
                    "key": line.key,
                    "title": line.title,
                    "state": line.state,
                    "colour": COLOURS.get(line.state, "grey"),
                    "sentence": line.sentence,
                    "what_to_do": line.what_to_do,
                    "details": line.details,
                }
                for line in lines
            ],
        }
    )


@never_cache
def load_balancer_health(request: HttpRequest) -> HttpResponse:
    """200 ``ok`` when the site can serve, 503 ``unavailable`` when it cannot; nothing else."""
    if database_line().state == "ok":
        return HttpResponse("ok\n", content_type="text/plain")
    return HttpResponse("unavailable\n", status=503, content_type="text/plain")
