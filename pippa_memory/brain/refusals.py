"""What a brain-door call must pass before its signature is proved, cheapest and most fundamental
first (:data:`UNSIGNED_CHECKS`): memory switched on, a secret configured, a declared length within
the cap, JSON, and a valid Standard Webhooks signature. Each check answers a :class:`Refusal` or
``None``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from rest_framework.request import Request

from pippa_memory.brain.signatures import SignatureRejected, configured_secrets, verify
from pippa_memory.conf import memory_settings
from pippa_memory.models import BrainCall


def body_cap() -> int:
    """The door's own cap, or Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` if that is smaller: past
    Django's, reading the body would raise before the door could answer in its own shape."""
    cap = memory_settings.BRAIN_MAX_BODY_BYTES
    upload_cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return cap if upload_cap is None else min(cap, upload_cap)


@dataclass(frozen=True)
class Refusal:
    """A call refused before its signature is proved: what it is answered, and its row's outcome."""

    status: int
    code: str
    message: str
    outcome: str
    headers: dict[str, str] = field(default_factory=dict)


def memory_switched_off(request: Request) -> Refusal | None:
    if memory_settings.ENABLED:
        return None
    return Refusal(
        503, "memory_disabled", "Memory is switched off here.", BrainCall.Outcome.UNAVAILABLE
    )


def no_secret_configured(request: Request) -> Refusal | None:
    if configured_secrets():
        return None
    return Refusal(
        503,
        "not_configured",
        "The brain door has no secret configured (PIPPA_MEMORY_BRAIN_SECRET).",
        BrainCall.Outcome.UNAVAILABLE,
    )


def chunked_body(request: Request) -> Refusal | None:
    # Django reads only a declared Content-Length: a chunked body would look empty.
    if not request.META.get("HTTP_TRANSFER_ENCODING"):
        return None
    return Refusal(
        411,
        "length_required",
        "Send the body with a Content-Length header; chunked bodies are not read here.",
        BrainCall.Outcome.LENGTH_REQUIRED,
    )


def body_over_the_cap(request: Request) -> Refusal | None:
    """Judged on the declared length, before a byte of the body is read."""
    cap = body_cap()
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) <= cap:
        return None
    return Refusal(
        413, "too_large", f"The body may be at most {cap} bytes.", BrainCall.Outcome.TOO_LARGE
    )


def not_json_media(request: Request) -> Refusal | None:
    if request.content_type.split(";")[0].strip().lower() == "application/json":
        return None
    return Refusal(
        415,
        "unsupported_media_type",
        "Send the body as application/json.",
        BrainCall.Outcome.UNSUPPORTED,
    )


def signature_rejected(request: Request) -> Refusal | None:
    try:
        verify(request._request.body, dict(request.headers), configured_secrets())
    except SignatureRejected as rejected:
        return Refusal(
            401,
            "unauthorized",
            str(rejected),
            BrainCall.Outcome.UNAUTHORIZED,
            {"WWW-Authenticate": 'Webhook realm="pippa-brain"'},
        )
    return None


#: What a call must pass before it is signed, cheapest and most fundamental first.
UNSIGNED_CHECKS: tuple[Callable[[Request], Refusal | None], ...] = (
    memory_switched_off,
    no_secret_configured,
    chunked_body,
    body_over_the_cap,
    not_json_media,
    signature_rejected,
)
