"""OpenAPI pieces for the brain door, drawn from the role registry so the document cannot drift."""

from typing import Any

from pippa_memory.brain.roles import ROLES
from pippa_memory.brain.service import SLUG

REQUEST: dict[str, Any] = {
    "description": "One of the roles, with that role's input (docs/brain-door.md).",
    "oneOf": [
        {
            "type": "object",
            "title": f"{role.name} request",
            "required": ["role", "soul", "input"],
            "additionalProperties": False,
            "properties": {
                "role": {"type": "string", "enum": [role.name]},
                "soul": {
                    "type": "string",
                    "pattern": SLUG,
                    "maxLength": 50,
                    "description": "A soul's slug; an unknown soul is a 404.",
                },
                "vessel": {
                    "type": "string",
                    "pattern": SLUG,
                    "maxLength": 50,
                    "description": (
                        "A vessel's slug: that vessel alone is asked (404 if unknown, 409 if it "
                        "may not serve the door). Leave out to let the door choose by priority."
                    ),
                },
                "viewer": {
                    "type": ["string", "null"],
                    "minLength": 1,
                    "maxLength": 64,
                    "description": (
                        "The member the memory items in the input are for (null or absent: "
                        "household only); items forgotten or made private to anyone else on "
                        "this site are left out before a vessel reads them."
                    ),
                },
                "input": role.input_schema,
            },
        }
        for role in ROLES.values()
    ],
}

USAGE: dict[str, Any] = {
    "type": "object",
    "required": ["input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens"],
    "properties": {
        "input_tokens": {"type": "integer"},
        "output_tokens": {"type": "integer"},
        "cached_input_tokens": {"type": "integer"},
        "cache_write_tokens": {"type": "integer"},
    },
}

FAILED_ATTEMPTS: dict[str, Any] = {
    "type": "array",
    "description": "Vessel attempts that failed, in the order they were made.",
    "items": {
        "type": "object",
        "required": ["vessel", "model", "outcome", "code", "message", "usage"],
        "properties": {
            "vessel": {"type": "string"},
            "model": {"type": "string"},
            "outcome": {"type": "string", "enum": ["failed"]},
            "code": {"type": "string", "description": "timeout, auth_failed, schema_violation…"},
            "message": {"type": "string"},
            "usage": {**USAGE, "description": "What the failed attempt cost (repair included)."},
        },
    },
}

REPLY: dict[str, Any] = {
    "type": "object",
    "required": [
        "role",
        "output",
        "vessel",
        "model",
        "usage",
        "request_id",
        "repaired",
        "synthetic",
        "attempts",
    ],
    "properties": {
        "role": {"type": "string", "enum": sorted(ROLES)},
        "output": {"type": "object"},
        "vessel": {"type": "string", "description": "The vessel that gave this answer."},
        "model": {"type": "string"},
        "usage": {**USAGE, "description": "What the answering vessel's calls cost."},
        "request_id": {"type": "string"},
        "repaired": {"type": "boolean"},
        "synthetic": {
            "type": "boolean",
            "description": (
                "True when the answering vessel does not reason (the offline vessel): the output "
                "is valid in shape but nobody judged it; do not act on it as a judgement."
            ),
        },
        "attempts": {
            **FAILED_ATTEMPTS,
            "description": "Attempts that failed before this answer (empty when a vessel was named).",
        },
    },
}

ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "properties": {"attempts": FAILED_ATTEMPTS},
                    "description": "Fields and what is wrong with them; for a vessel failure, "
                    "`attempts`.",
                },
            },
        }
    },
}

ERRORS: dict[int, str] = {
    400: "Invalid input; details name each field.",
    401: "Missing, wrong or stale signature.",
    404: "`unknown_soul` or `unknown_vessel`: no such soul, or no vessel of the name given.",
    409: "`in_progress`: the first call with this webhook-id is still running; or "
    "`ineligible_vessel`: the named vessel may not serve the door (switched off, or no brain "
    "priority); or `memory_gone`: a decide's `about` names a memory forgotten or made private "
    "here.",
    411: "A chunked body; send it with a Content-Length.",
    413: "The body is over the cap; refused before parsing.",
    415: "The body is not application/json.",
    422: "The webhook-id was used before with a different body.",
    429: "Throttled; see Retry-After.",
    500: "An unplanned failure, logged under the request id; the audit row ends failed.",
    502: "The named vessel, or else every eligible vessel, gave no valid answer; "
    "`details.attempts` lists each attempt.",
    503: "Memory is off, no secret is configured, or no vessel may serve the door.",
    504: "Every eligible vessel timed out.",
}
