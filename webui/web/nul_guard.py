"""A NUL character is refused at the door: no text column on PostgreSQL can hold one, so a NUL
that reached a query or a save would be a server error far from where it came in.

The middleware checks what every request carries before any view reads it: the path, the query
string (names and values), the headers, and the fields of a form body. A NUL in any of them is a
400 in the site's shape: JSON ``{"error": {"code", "message", "details"}}`` under ``/api/``, the
site's plain error page elsewhere. So is a query string or urlencoded form field whose
percent-encoded bytes are not UTF-8 (a lone surrogate, ``%ED%A0%80``): Django would read it as
U+FFFD and save that in place of what was sent. JSON bodies are the API parser's to refuse (it
names the field); a signed body (the brain door) is read as bytes by its own view, never here.
"""

from collections.abc import Callable, Iterable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.template import loader

NUL = "\x00"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def nul_in(pairs: Iterable[tuple[str, list[str]]]) -> str | None:
    """The name of the first field whose name or any value holds a NUL, or None."""
    for name, values in pairs:
        if NUL in name or any(NUL in value for value in values):
            return name.replace(NUL, "\\0")
    return None


def not_utf8_in(encoded: bytes) -> str | None:
    """The name of the first field of an urlencoded ``encoded`` whose name or value is not
    UTF-8 once percent-decoded, or None."""
    for pair in encoded.split(b"&"):
        name, _, value = (
            unquote_to_bytes(part.replace(b"+", b" ")) for part in pair.partition(b"=")
        )
        try:
            name.decode("utf-8")
            value.decode("utf-8")
        except UnicodeDecodeError:
            return name.decode("utf-8", "replace")
    return None


def where_not_utf8(request: HttpRequest) -> str | None:
    """Where text that is not UTF-8 is in ``request``'s query string or urlencoded form, or None."""
    query = request.META.get("QUERY_STRING", "")
    field = not_utf8_in(query.encode("latin-1", "replace") if isinstance(query, str) else query)
    if field is not None:
        return f"the query string field {field!r}"
    if request.method == "POST" and request.content_type == FORM_TYPES[0]:
        field = not_utf8_in(request.body)
        if field is not None:
            return f"the form field {field!r}"
    return None


def where_nul(request: HttpRequest) -> str | None:
    """Where a NUL is in ``request`` ("the path", "the query string field q", ...), or None."""
    if NUL in request.path_info:
        return "the path"
    field = nul_in(request.GET.lists())
    if field is not None:
        return f"the query string field {field!r}"
    for name, value in request.META.items():
        if name.startswith("HTTP_") and isinstance(value, str) and NUL in value:
            return f"the header {name[5:].replace('_', '-').title()}"
    if request.method == "POST" and request.content_type in FORM_TYPES:
        field = nul_in(request.POST.lists())
        if field is not None:
            return f"the form field {field!r}"
    return None


def refusal(request: HttpRequest, where: str, *, nul: bool = True) -> HttpResponse:
    """The 400 in the site's shape: JSON under ``/api/``, the plain error page elsewhere."""
    if nul:
        message, kind = f"A NUL character is not allowed in {where}.", "nul"
    else:
        message = f"Text that is not UTF-8 (a lone surrogate?) is not allowed in {where}."
        kind = "not_utf8"
    if request.path_info.startswith("/api/"):
        body = {"error": {"code": "invalid", "message": message, "details": {kind: [where]}}}
        return JsonResponse(body, status=400)
    page = loader.select_template(["400.html", "webui/bad_request.html"])
    return HttpResponseBadRequest(page.render({"message": message}, request))


class RefuseNulMiddleware:
    """Answers 400 to any request that carries a NUL, or text that is not UTF-8, where a member
    can type (see the module)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = where_nul(request)
        if where is not None:
            return refusal(request, where)
        where = where_not_utf8(request)
        if where is not None:
            return refusal(request, where, nul=False)
        return self.get_response(request)
