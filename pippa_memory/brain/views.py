"""``POST /api/memory/brain/``: the door the memory engine calls to borrow the household's vessels.

The checks run cheapest and most fundamental first, and every call leaves an audit row: memory
switched off or no secret (503), a chunked body (411: send a Content-Length), a body over the cap
(413, before anything is read), not JSON (415), a bad signature (401 with ``WWW-Authenticate``),
throttled (429 with ``Retry-After``), a ``webhook-id`` longer than its column (400), a repeated
``webhook-id`` (the stored answer, or 409 while the first call runs), bad input (400 naming the
fields: a body that is not JSON, nested too deep or holding text that cannot be stored is bad
input), an unknown soul or vessel (404) or a vessel that may not serve (409), then the run itself
(200, or 502/503/504). Whatever goes wrong once a call's row is written, the row ends (``failed``,
500, with the reason), so a replay of its id is never 409 for ever.

The limits are counted in the cache every process shares (:mod:`pippa_memory.brain.throttles`). A
refusal before the signature is proved counts against the caller's address first, and past
``BRAIN_UNSIGNED_RATE`` it is a 429 with no audit row, so a flood cannot fill the table.
"""

import logging
import time
import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pippa_memory.brain import openapi
from pippa_memory.brain.lease import CALL_SLOTS, BrainCallHeartbeat, lease_end, take_over_lapsed
from pippa_memory.brain.refusals import UNSIGNED_CHECKS, Refusal
from pippa_memory.brain.service import BrainFailure, run_judgement
from pippa_memory.brain.throttles import wait_for_signed_call, wait_for_unsigned_call
from pippa_memory.conf import memory_settings
from pippa_memory.member_text_hash import digest_matches, keyed_sha256
from pippa_memory.models import BrainCall
from webui.text.canonical import json_roundtrip
from webui.text.untrusted_json import UnstorableText, UntrustedJSONError, parse_untrusted_json

logger = logging.getLogger(__name__)

# A longer id could only be stored cut short, where it would meet another id's stored answer.
WEBHOOK_ID_MAX_LENGTH = BrainCall._meta.get_field("webhook_id").max_length

SIGNATURE_HEADERS = [
    OpenApiParameter(name, str, OpenApiParameter.HEADER, required=True, description=words)
    for name, words in (
        ("webhook-id", "Unique id of this call; a repeated id gets the stored answer."),
        ("webhook-timestamp", "Unix seconds; within five minutes of the door's clock."),
        ("webhook-signature", "Space-separated v1,<base64 HMAC-SHA256 of id.timestamp.body>."),
    )
]

OUTCOME_FOR_CODE = {
    "invalid": BrainCall.Outcome.INVALID,
    "unknown_soul": BrainCall.Outcome.INVALID,
    "unknown_vessel": BrainCall.Outcome.INVALID,
    "ineligible_vessel": BrainCall.Outcome.INVALID,
    "memory_gone": BrainCall.Outcome.INVALID,
    "schema_violation": BrainCall.Outcome.SCHEMA_VIOLATION,
    "vessel_failed": BrainCall.Outcome.VESSEL_FAILED,
    "vessel_timeout": BrainCall.Outcome.TIMEOUT,
    "no_vessel": BrainCall.Outcome.UNAVAILABLE,
}


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def throttled_body(message: str, wait: int) -> dict[str, Any]:
    return error_body("throttled", message, {"retry_after": wait})


def webhook_id_problem(webhook_id: str) -> str:
    """Why ``webhook_id`` cannot key a stored answer as it was signed, or ``""``."""
    if len(webhook_id) > WEBHOOK_ID_MAX_LENGTH:
        return (
            f"The webhook-id may be at most {WEBHOOK_ID_MAX_LENGTH} characters; "
            f"this one has {len(webhook_id)}."
        )
    if "\x00" in webhook_id:
        return "The webhook-id may not hold a NUL character."
    return ""


def response_bytes(body: dict[str, Any]) -> bytes:
    """The response's bytes, rendered once: sent to the first call and kept for its replays. JSON
    escapes a NUL (``\\u0000``), so the text fits any text column; a lone surrogate, which no
    response can carry, raises here."""
    return JSONRenderer().render(body)


def json_response(status: int, raw: bytes) -> HttpResponse:
    return HttpResponse(raw, status=status, content_type="application/json")


def unexpected_failure_body(call: BrainCall, error: Exception) -> dict[str, Any]:
    return error_body(
        "internal_error",
        f"The door failed unexpectedly ({type(error).__name__}); "
        f"it is logged under request id {call.request_id}.",
    )


def end_row_failed(call: BrainCall, body: dict[str, Any]) -> None:
    """Write only the fields that end the row, so a value that broke the full save cannot."""
    call.outcome, call.status_code = BrainCall.Outcome.FAILED, 500
    BrainCall.objects.filter(pk=call.pk).update(
        outcome=call.outcome,
        status_code=call.status_code,
        latency_ms=call.latency_ms,
        response_body=response_bytes(body).decode() if call.webhook_id else None,
    )


class DoorCall:
    """One call through the door: its audit row, its clock, and the two ways it is answered."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.started = time.monotonic()
        self.row = BrainCall(request_id=uuid.uuid4().hex)

    def finish(
        self, status: int, body: dict[str, Any], outcome: str, **headers: str
    ) -> HttpResponse:
        """End the row with this answer and give it; a row that cannot be saved as it is still
        ends (``failed``, 500) once it was written. A signed call keeps the exact bytes it was
        sent, so a replay of its ``webhook-id`` gets them again."""
        call = self.row
        call.outcome = outcome
        call.status_code = status
        call.latency_ms = int((time.monotonic() - self.started) * 1000)
        call.lease_until = None
        try:
            raw = response_bytes(body)
            if call.webhook_id:
                call.response_body = raw.decode()
            with transaction.atomic():  # a failed save must not poison the ending below
                call.save()
        except Exception as error:
            if call.pk is None:
                raise
            logger.exception("Brain call %s could not be stored as it ended", call.request_id)
            status, body = 500, unexpected_failure_body(call, error)
            end_row_failed(call, body)
            raw = response_bytes(body)
        response = json_response(status, raw)
        response["X-Request-Id"] = call.request_id
        for name, value in headers.items():
            response[name.replace("_", "-")] = value
        return response

    def refuse_unsigned(self, refusal: Refusal) -> HttpResponse:
        """Answer a refusal that comes before the signature is proved. It counts against the
        address first, and past the rate it is a 429 that writes no audit row."""
        wait = wait_for_unsigned_call(self.request)
        if wait is not None:
            body = throttled_body(
                "Too many calls from this address that are not signed; slow down.", wait
            )
            return Response(body, status=429, headers={"Retry-After": str(wait)})
        body = error_body(refusal.code, refusal.message)
        return self.finish(refusal.status, body, refusal.outcome, **refusal.headers)


class RequiredBodySchema(AutoSchema):
    """The door's body is a plain JSON Schema; drf-spectacular marks such bodies optional."""

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body = super()._get_request_body(direction)
        if body:
            body["required"] = True
        return body


class BrainDoorView(APIView):
    schema = RequiredBodySchema()
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]
    throttle_classes: list[Any] = []  # the door counts its own limits, in the shared cache

    @extend_schema(
        operation_id="brain_door",
        summary="Borrow a household vessel for judgement (decide, curate, assemble).",
        parameters=SIGNATURE_HEADERS,
        request={"application/json": openapi.REQUEST},
        responses={
            200: OpenApiResponse(openapi.REPLY, description="The validated answer."),
            **{
                status: OpenApiResponse(openapi.ERROR, description=words)
                for status, words in openapi.ERRORS.items()
            },
        },
        auth=[],
    )
    def post(self, request: Request) -> HttpResponse:
        door = DoorCall(request)
        for check in UNSIGNED_CHECKS:
            refusal = check(request)
            if refusal is not None:
                return door.refuse_unsigned(refusal)
        wait = wait_for_signed_call(request)
        if wait is not None:
            return door.finish(
                429,
                throttled_body("Too many calls; slow down.", wait),
                BrainCall.Outcome.THROTTLED,
                Retry_After=str(wait),
            )
        if not CALL_SLOTS.try_enter():
            # No row: the caller retries, and the chat pages keep the threads they share with us.
            wait = max(1, int(memory_settings.BRAIN_DEADLINE / 3))
            body = throttled_body("The door runs as many calls as it may; try again soon.", wait)
            body["error"]["code"] = "busy"
            response = json_response(503, response_bytes(body))
            response["Retry-After"] = str(wait)
            return response
        try:
            return self.run_once(request, request._request.body, door)
        finally:
            CALL_SLOTS.leave()

    def run_once(self, request: Request, raw: bytes, door: DoorCall) -> HttpResponse:
        """Run the signed call, or answer a repeat of its ``webhook-id`` from the stored result."""
        call, finish = door.row, door.finish
        webhook_id = request.headers["webhook-id"]
        problem = webhook_id_problem(webhook_id)
        if problem:
            return finish(400, error_body("invalid_webhook_id", problem), BrainCall.Outcome.INVALID)
        digest = keyed_sha256(raw)  # shown to staff: keyed, so no guess of the body can be tested
        earlier = BrainCall.objects.filter(webhook_id=webhook_id).first()
        if earlier is not None:
            return self.replay(earlier, raw, door)
        call.webhook_id = webhook_id
        call.body_sha256 = digest
        call.outcome = BrainCall.Outcome.RUNNING
        call.lease_until = lease_end()
        try:
            with transaction.atomic():
                call.save()
        except IntegrityError:
            call.webhook_id = None
            earlier = BrainCall.objects.get(webhook_id=webhook_id)
            return self.replay(earlier, raw, door)
        return self.run_held(raw, door)

    def run_held(self, raw: bytes, door: DoorCall) -> HttpResponse:
        """Judge the call whose running row this process holds, renewing its lease meanwhile."""
        call, finish = door.row, door.finish
        try:
            with BrainCallHeartbeat(call.request_id):
                return self.judge(raw, call, finish)
        except Exception as error:
            # The row says running until it ends: end it, whatever went wrong.
            logger.exception("Brain call %s failed unexpectedly", call.request_id)
            return finish(500, unexpected_failure_body(call, error), BrainCall.Outcome.FAILED)

    def judge(self, raw: bytes, call: BrainCall, finish: Any) -> HttpResponse:
        """Parse, validate and run the call whose row is written; every path ends the row."""
        try:
            body = parse_untrusted_json(raw)
        except UnstorableText as exc:
            return finish(
                400,
                error_body("invalid", "The request is invalid.", {exc.field: exc.message}),
                BrainCall.Outcome.INVALID,
            )
        except UntrustedJSONError as exc:
            return finish(400, error_body("parse_error", exc.message), BrainCall.Outcome.INVALID)
        if isinstance(body, dict):
            # Audit what was asked, minus NUL characters no text column can hold.
            call.role = str(body.get("role", "")).replace("\x00", "")[:20]
            call.soul = str(body.get("soul", "")).replace("\x00", "")[:50]
        try:
            judgement = run_judgement(
                body, deadline_at=time.monotonic() + memory_settings.BRAIN_DEADLINE
            )
        except BrainFailure as failure:
            call.vessel, call.attempts = failure.vessel, json_roundtrip(failure.attempts)
            outcome = OUTCOME_FOR_CODE.get(failure.code, BrainCall.Outcome.VESSEL_FAILED)
            return finish(
                failure.status,
                error_body(failure.code, failure.message, failure.details),
                outcome,
            )
        call.vessel, call.model = judgement.vessel, judgement.model
        call.repaired = judgement.repaired
        call.attempts = json_roundtrip(judgement.attempts())
        reply = {
            "role": body["role"],
            "output": judgement.output,
            "vessel": judgement.vessel,
            "model": judgement.model,
            "usage": judgement.usage,
            "request_id": call.request_id,
            "repaired": judgement.repaired,
            "synthetic": judgement.synthetic,
            "attempts": list(judgement.failed_before),
        }
        return finish(200, reply, BrainCall.Outcome.ANSWERED)

    def replay(self, earlier: BrainCall, raw: bytes, door: DoorCall) -> HttpResponse:
        """Answer a repeated ``webhook-id``: the stored bytes, 409 while a live process runs the
        first call, or the call run again when the process that held it is gone."""
        call, finish = door.row, door.finish
        call.role, call.soul = earlier.role, earlier.soul
        if not digest_matches(earlier.body_sha256, raw):
            return finish(
                422,
                error_body(
                    "idempotency_key_reused",
                    "This webhook-id was used before with a different body.",
                ),
                BrainCall.Outcome.CONFLICT,
            )
        if earlier.outcome == BrainCall.Outcome.RUNNING:
            if take_over_lapsed(earlier, request_id=call.request_id):
                # The first call's process died: this call holds its row now and runs it again.
                logger.warning(
                    "Brain call %s ran again as %s: the first one's lease lapsed",
                    earlier.request_id,
                    call.request_id,
                )
                earlier.request_id = call.request_id
                door.row = earlier
                return self.run_held(raw, door)
            return finish(
                409,
                error_body("in_progress", "The first call with this webhook-id is still running."),
                BrainCall.Outcome.CONFLICT,
            )
        response = json_response(earlier.status_code, (earlier.response_body or "null").encode())
        response["X-Request-Id"] = earlier.request_id
        response["Idempotent-Replayed"] = "true"
        return response
