"""Every API error has one shape: ``{"error": {"code", "message", "details"}}``."""

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def error_response(
    *, code: str, message: str, status_code: int, details: dict[str, Any] | None = None
) -> Response:
    """A response in the API's error shape."""
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return Response(body, status=status_code)


def _first_messages(detail: Any, prefix: str = "") -> list[str]:
    """Flatten DRF's nested validation detail into ``field: message`` lines."""
    if isinstance(detail, dict):
        lines = []
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            lines.extend(_first_messages(value, name))
        return lines
    if isinstance(detail, list):
        lines = []
        for item in detail:
            lines.extend(_first_messages(item, prefix))
        return lines
    return [f"{prefix}: {detail}" if prefix and prefix != "non_field_errors" else str(detail)]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, reshaped: validation errors name each field, everything else its cause; a
    body past Django's upload cap is a 413 here too, not Django's HTML 400."""
    if isinstance(exc, RequestDataTooBig):
        return error_response(
            code="too_large",
            message=f"The body may be at most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
            status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    # Django's own 404 and 403 (get_object_or_404, a permission check) in the API's shape too,
    # as DRF's NotFound and PermissionDenied are.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        return error_response(
            code="invalid",
            message="; ".join(_first_messages(details)) or "The request is invalid.",
            status_code=status.HTTP_400_BAD_REQUEST,
            details=details,
        )
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        result = error_response(
            code=code, message=str(exc.detail), status_code=response.status_code
        )
        for header in ("WWW-Authenticate", "Retry-After", "Allow"):
            if header in response:
                result[header] = response[header]
        return result
    return response
