"""Engine contract v3 (DESIGN.md section 7): the JSON Schemas every engine answer must match.

An answer that does not match is a failure, never half-used. ``docs/engine-contract.md`` and
``docs/engine-openapi.yaml`` describe the same shapes for people and tools. Beyond its shape,
every string of an answer must be valid Unicode scalar values (:func:`unusable_text_problem`).
Every call names the contract version it speaks in :data:`CONTRACT_HEADER`.
"""

from typing import Any

from webui.text.lone_surrogates import lone_surrogate_path

CONTRACT_HEADER: tuple[str, str] = ("X-Memory-Contract", "3")
"""The header, and its value, naming the contract version on every call the client makes."""

REVISION = {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,100}$"}
TEXT = {"type": "string"}
TEXT_OR_NULL = {"type": ["string", "null"]}
SCOPE = {"enum": ["private", "household"]}
COUNT = {"type": "integer", "minimum": 0}
IDS = {"type": "array", "items": TEXT}


def all_required(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema of ``properties``, each of them required: every object in the contract
    requires all of its fields, so each schema names them once."""
    return {"type": "object", "required": list(properties), "properties": properties}


MEMBER = all_required({"member": {"type": "string", "minLength": 1}, "name": TEXT})

ITEM: dict[str, Any] = all_required(
    {
        "id": {"type": "string", "minLength": 1},
        "text": TEXT,
        "at": TEXT,
        "scope": SCOPE,
        "said_by": {"oneOf": [{"type": "null"}, MEMBER]},
        "source": all_required(
            {"conversation": TEXT_OR_NULL, "message": TEXT_OR_NULL, "tool_use": TEXT_OR_NULL}
        ),
        "keep": {"type": "boolean"},
    }
)
"""One memory item, wherever it appears: who said it (null: an unattended run), where, and
whether a member marked it *keep in every chat*."""

DECISION: dict[str, Any] = all_required(
    {
        "choice": TEXT_OR_NULL,
        "confidence": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "reason": TEXT,
        "brain_call": TEXT_OR_NULL,
        "judged_by": TEXT,
        "outcome": {
            "enum": [
                "replaced",
                "adds nothing",
                "kept both",
                "door failed",
                "corrected",
                "restored",
            ]
        },
        "at": TEXT,
    }
)
"""A decision about a memory: the brain door's choice, confidence and reason and its call's
webhook id, or a member's correction or restore, and what came of it."""

KEPT_ITEM: dict[str, Any] = all_required(
    {
        **ITEM["properties"],
        "supersedes": {
            "oneOf": [{"type": "null"}, all_required({"id": TEXT, "text": TEXT, "at": TEXT})]
        },
        "superseded_by": {"oneOf": [{"type": "null"}, all_required({"id": TEXT, "at": TEXT})]},
        "decision": {"oneOf": [{"type": "null"}, DECISION]},
    }
)
"""Version 3: an item as listing, finding, adding, correcting and restoring answer it: what it
replaced (``supersedes``), what replaced it (``superseded_by``: it is in history, not current)
and the last decision about it."""

BLOCK: dict[str, Any] = all_required(
    {
        "soul": TEXT,
        "revision": REVISION,
        "viewer": TEXT_OR_NULL,
        "block": TEXT,
        "items": IDS,
        "left_out": COUNT,
    }
)
"""A rendered block of one revision for one viewer, with the ids of the items it holds and how
many memories visible to that viewer at that revision it leaves out."""

RECALL_ITEM: dict[str, Any] = {
    **ITEM,
    "properties": {**ITEM["properties"], "matched_by": {"enum": ["words", "meaning"]}},
}
"""A recalled item: version 3 says how it matched (``words``: a query word, stemmed, is in it;
``meaning``: no word shared, close in meaning); a fallback's items carry no ``matched_by``."""

RECALL: dict[str, Any] = all_required(
    {
        "match": {"enum": ["words", "meaning", "fallback", "exact"]},
        "items": {"type": "array", "items": RECALL_ITEM},
        "fallback": {
            "oneOf": [{"type": "null"}, all_required({"from": TEXT, "to": TEXT, "reason": TEXT})]
        },
    }
)

ITEMS: dict[str, Any] = all_required(
    {"items": {"type": "array", "items": KEPT_ITEM}, "next": TEXT_OR_NULL, "revision": REVISION}
)
"""One page of the items a viewer may see, newest first; ``next`` is the cursor of the next."""

MEMBERS: dict[str, Any] = all_required(
    {
        "members": {
            "type": "array",
            "items": all_required({"member": TEXT, "name": TEXT, "private_items": COUNT}),
        },
        "revision": REVISION,
    }
)
"""Each member's count of private items (never their text), for staff."""

ITEM_FOUND: dict[str, Any] = all_required({"item": KEPT_ITEM, "revision": REVISION})
"""Version 3: one item the viewer may see, found by its id, and the head revision."""

FORGOTTEN: dict[str, Any] = all_required({"forgotten": TEXT, "revision": REVISION})

RESCOPED: dict[str, Any] = all_required({"item": ITEM, "revision": REVISION})
"""A changed item (its scope, its *keep in every chat* mark) and the head revision it moved to."""

FORGOTTEN_MEMBER: dict[str, Any] = all_required(
    {"forgotten": COUNT, "ids": IDS, "revision": REVISION}
)
"""How many items a member's forget took, and (version 3) exactly which."""

EXPORT_ITEM: dict[str, Any] = all_required(
    {
        **ITEM["properties"],
        "history": {
            "type": "array",
            "items": all_required(
                {"revision": REVISION, "change": {"enum": ["scope", "keep"]}, "to": {}}
            ),
        },
        "superseded_by": {"oneOf": [{"type": "null"}, all_required({"id": TEXT, "at": TEXT})]},
    }
)
"""An item as an export carries it: the item's shape and its changes by revision in the engine it
came from (those revisions are not kept by an import: revisions move forward)."""

EXPORT_PAGE: dict[str, Any] = all_required(
    {
        "soul": TEXT,
        "items": {"type": "array", "items": EXPORT_ITEM},
        "next": TEXT_OR_NULL,
        "total": COUNT,
        "revision": REVISION,
    }
)
"""Version 3: one page of every live memory of a soul, oldest first, for an admin's export."""

IMPORTED: dict[str, Any] = all_required(
    {"added": COUNT, "present": COUNT, "forgotten": COUNT, "revision": REVISION}
)
"""Version 3: what one import batch did (added, already present, left forgotten) and the head."""

ASK: dict[str, Any] = all_required({"ask_id": {"type": "string", "minLength": 1}})

ANSWERS: dict[str, Any] = all_required(
    {
        "answers": {
            "type": "array",
            "items": all_required(
                {
                    "id": TEXT,
                    "ask_id": TEXT,
                    "question": TEXT,
                    "answer": TEXT,
                    "answered_at": TEXT,
                    "items": IDS,
                }
            ),
        }
    }
)
"""Answers ready for a conversation, each with (version 3) the ids of the memories it was made
from, so one made from a memory since forgotten can be told and withheld."""

BRIEF: dict[str, Any] = all_required(
    {"brief": TEXT, "revision": REVISION, "items": IDS, "viewer": {"type": "null"}}
)
"""A wake's brief, with (version 3) the ids of the items it was built from; never for a viewer."""

BUNDLE: dict[str, Any] = all_required(
    {
        "bundle": TEXT,
        "revision": REVISION,
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "items": IDS,
        "viewer": {"type": "null"},
    }
)
"""A job's bundle, with (version 3) the ids of the items it was built from; never for a viewer."""


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
