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
                    "description": "Preferred vessel's slug, used if it may serve the door.",
                },
                "input": role.input_schema,
            },
        }
        for role in ROLES.values()
    ],
}

REPLY: dict[str, Any] = {
    "type": "object",
    "required": ["role", "output", "vessel", "model", "usage", "request_id", "repaired"],
    "properties": {
        "role": {"type": "string", "enum": sorted(ROLES)},
        "output": {"type": "object"},
        "vessel": {"type": "string"},
        "model": {"type": "string"},
        "usage": {
            "type": "object",
            "required": ["input_tokens", "output_tokens", "cached_input_tokens"],
            "properties": {
                "input_tokens": {"type": "integer"},
                "output_tokens": {"type": "integer"},
                "cached_input_tokens": {"type": "integer"},
            },
        },
        "request_id": {"type": "string"},
        "repaired": {"type": "boolean"},
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
                "details": {"type": "object"},
            },
        }
    },
}

ERRORS: dict[int, str] = {
    400: "Invalid input; details name each field.",
    401: "Missing, wrong or stale signature.",
    404: "Unknown soul.",
    409: "The first call with this webhook-id is still running.",
    411: "A chunked body; send it with a Content-Length.",
    413: "The body is over the cap; refused before parsing.",
    415: "The body is not application/json.",
    422: "The webhook-id was used before with a different body.",
    429: "Throttled; see Retry-After.",
    500: "An unplanned failure, logged under the request id; the audit row ends failed.",
    502: "No vessel could give a valid answer.",
    503: "Memory is off, no secret is configured, or no vessel may serve the door.",
    504: "Every eligible vessel timed out.",
}
