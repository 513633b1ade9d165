"""Engine contract v1 (DESIGN.md section 7): the JSON Schemas every engine answer must match.

An answer that does not match is a failure, never half-used. ``docs/engine-contract.md`` and
``docs/engine-openapi.yaml`` describe the same shapes for people and tools. Beyond its shape,
every string of an answer must be valid Unicode scalar values (:func:`unusable_text_problem`).
"""

from typing import Any

from webui.lone_surrogates import lone_surrogate_path

REVISION = {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,100}$"}
TEXT = {"type": "string"}

BLOCK: dict[str, Any] = {
    "type": "object",
    "required": ["soul", "revision", "block"],
    "properties": {"soul": TEXT, "revision": REVISION, "block": TEXT},
}

RECALL: dict[str, Any] = {
    "type": "object",
    "required": ["match", "items", "fallback"],
    "properties": {
        "match": {"enum": ["exact", "fallback"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "text", "at"],
                "properties": {"id": TEXT, "text": TEXT, "at": TEXT},
            },
        },
        "fallback": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["from", "to", "reason"],
                    "properties": {"from": TEXT, "to": TEXT, "reason": TEXT},
                },
            ]
        },
    },
}

ASK: dict[str, Any] = {
    "type": "object",
    "required": ["ask_id"],
    "properties": {"ask_id": {"type": "string", "minLength": 1}},
}

ANSWERS: dict[str, Any] = {
    "type": "object",
    "required": ["answers"],
    "properties": {
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "ask_id", "question", "answer", "answered_at"],
                "properties": {
                    "id": TEXT,
                    "ask_id": TEXT,
                    "question": TEXT,
                    "answer": TEXT,
                    "answered_at": TEXT,
                },
            },
        }
    },
}

BRIEF: dict[str, Any] = {
    "type": "object",
    "required": ["brief", "revision"],
    "properties": {"brief": TEXT, "revision": REVISION},
}

BUNDLE: dict[str, Any] = {
    "type": "object",
    "required": ["bundle", "revision", "sha256"],
    "properties": {
        "bundle": TEXT,
        "revision": REVISION,
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
}


def unusable_text_problem(answer: Any) -> str | None:
    """Why ``answer`` (a decoded engine answer, any route) holds text nothing can use, or ``None``.

    JSON can carry a lone surrogate (``"\\ud800"``) that no UTF-8 encoder, database column or
    provider request can hold; an answer with one, anywhere (values or keys), is refused whole,
    as an answer of the wrong shape is.
    """
    where = lone_surrogate_path(answer)
    if where is None:
        return None
    return (
        f"The engine's answer holds text that is not valid Unicode (a lone surrogate) at {where}."
    )
