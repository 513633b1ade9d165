"""An address too long to be a real one is a 414 in the site's shape, not the server's.

gunicorn refuses a request line past its ``limit_request_line`` with an HTML page of its own,
before the site sees it. ``pippa_site/gunicorn_conf.py`` therefore lifts that limit (to gunicorn's
own hard bound of about a megabyte) and this middleware, first in line, refuses an address whose
path and query string together pass :data:`MAX_URL_CHARS`: JSON
``{"error": {"code", "message", "details"}}`` under ``/api/``, the site's plain error page
elsewhere, both with status 414 and before anything reads the request.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

#: Longest path plus query string the site reads, in characters: gunicorn's own default request
#: line limit (4094 bytes), so nothing that worked before is refused now.
MAX_URL_CHARS = 4094


def url_length(request: HttpRequest) -> int:
    """How long ``request``'s address is as sent: its path and its query string."""
    return len(request.META.get("RAW_URI") or request.get_full_path())


def too_long(request: HttpRequest, length: int) -> HttpResponse:
    """The 414 in the site's shape: JSON under ``/api/``, the plain error page elsewhere."""
    message = (
        f"This address is {length} characters long; the site reads at most {MAX_URL_CHARS}. "
        "Shorten it (a search of fewer words, say) and try again."
    )
    if request.path_info.startswith("/api/"):
        details = {"length": length, "limit": MAX_URL_CHARS}
        body = {"error": {"code": "uri_too_long", "message": message, "details": details}}
        return JsonResponse(body, status=414)
    page = loader.select_template(["400.html"])
    return HttpResponse(page.render({"message": message}, request), status=414)


class RefuseLongUrlMiddleware:
    """Answers 414 to a request whose address passes :data:`MAX_URL_CHARS` (see the module)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = url_length(request)
        if length > MAX_URL_CHARS:
            return too_long(request, length)
        return self.get_response(request)
