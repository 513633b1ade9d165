"""Each contract request checked against ``docs/engine-openapi.yaml``, the document the plug-in's
answer schemas are held to (``tests/pippa_memory/engine/test_contract_docs.py``): the JSON body, the query
parameters (``limit`` read as an integer) and the path parameters, by the route's
``operationId``.

A request that does not match is ``400 invalid_request`` with one ``{"field", "problem"}`` in
``details`` for each thing wrong, in the engine's own words, never quoting the value sent.
The document's OpenAPI 3.0 schemas become JSON Schema here (``nullable`` is a ``null`` type).

The client always sends every field the document requires; the reference engine also takes a
call that leaves out one it has a default for (:data:`DEFAULTED`), as calls made by hand do.
"""

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from reference_engine.reading import field_name
from reference_engine.wire import Refusal

OPENAPI = Path(__file__).resolve().parents[1] / "docs" / "engine-openapi.yaml"

DEFAULTED: dict[str, set[str]] = {
    "recall": {"conversation", "viewer", "limit"},  # viewer: none (household); limit: 5
    "ask": {"viewer"},
    "wakeBrief": {"wake", "wake.kind", "wake.id"},  # the brief is the soul's, whatever the wake
    "bundle": {"revision", "job.id", "job.name"},  # revision: the head
    "rescopeItem": {"viewer"},
}
"""Fields an operation's body may leave out here, by dotted name: what the engine does without."""

FIELD_CODES: dict[str, dict[str, str]] = {
    "rescopeItem": {"scope": "invalid_scope", "keep": "invalid_keep"},
    "addItem": {"scope": "invalid_scope", "text": "invalid_text"},
    "correctItem": {"text": "invalid_text"},
}
"""Codes the contract names for a field that is wrong (else ``invalid_request``)."""

MAX_DETAILS = 20


@cache
def document() -> dict[str, Any]:
    return yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))


def resolved(schema: Any) -> Any:
    """``schema`` with every ``$ref`` into the document's components replaced by its target."""
    if isinstance(schema, list):
        return [resolved(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        target: Any = document()
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return resolved(target)
    return {key: resolved(value) for key, value in schema.items()}


def json_schema(schema: Any, defaulted: set[str], at: str = "") -> Any:
    """An OpenAPI 3.0 schema (refs resolved) as JSON Schema: ``nullable`` admits null, and the
    ``defaulted`` fields (dotted names from the body's root) are not required."""
    if isinstance(schema, list):
        return [json_schema(item, defaulted, at) for item in schema]
    if not isinstance(schema, dict):
        return schema
    nullable = schema.get("nullable") is True
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("nullable", "description", "example"):
            continue
        if key == "properties":
            converted[key] = {
                name: json_schema(inner, defaulted, f"{at}{name}.") for name, inner in value.items()
            }
        elif key == "required":
            converted[key] = [name for name in value if f"{at}{name}" not in defaulted]
        else:
            converted[key] = json_schema(value, defaulted, at)
    if not nullable:
        return converted
    if "enum" in converted and None not in converted["enum"]:
        converted["enum"] = [*converted["enum"], None]
    if "type" in converted:
        converted["type"] = [converted["type"], "null"]
        return converted
    return {"anyOf": [{"type": "null"}, converted]}


@cache
def operations() -> dict[str, dict[str, Any]]:
    """Each operation of the document by its ``operationId``, with its parameters resolved."""
    found = {}
    for item in document()["paths"].values():
        for operation in item.values():
            found[operation["operationId"]] = resolved(operation)
    return found


@cache
def body_validator(operation_id: str) -> Draft202012Validator | None:
    content = operations()[operation_id].get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema is None:
        return None
    converted = json_schema(schema, DEFAULTED.get(operation_id, set()))
    return Draft202012Validator(converted)


@cache
def parameters(operation_id: str, place: str) -> dict[str, dict[str, Any]]:
    """The operation's parameters ``in`` a place (``query`` or ``path``): name to JSON Schema."""
    return {
        parameter["name"]: json_schema(parameter.get("schema", {}), set())
        for parameter in operations()[operation_id].get("parameters", [])
        if parameter["in"] == place
    }


def checked_body(operation_id: str, body: Any) -> Any:
    """The body when it matches the operation's schema; 400 naming each field that does not."""
    validator = body_validator(operation_id)
    if validator is None:  # the route reads no body: whatever was sent is left alone
        return {}
    if body is None:
        body = {}
    problems = [detail for found in validator.iter_errors(body) for detail in described(found)]
    if problems:
        codes = FIELD_CODES.get(operation_id, {})
        named = [codes[p["field"]] for p in problems if p["field"] in codes]
        raise malformed(problems, code=named[0] if named else "invalid_request")
    return body


def checked_query(operation_id: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """The operation's query parameters, one value each, as their schemas type them."""
    taken: dict[str, Any] = {}
    problems: list[dict[str, str]] = []
    for name, schema in parameters(operation_id, "query").items():
        values = query.get(name, [])
        if len(values) > 1:
            problems.append({"field": name, "problem": "is given more than once"})
            continue
        if not values:
            continue
        value: Any = values[0]
        if schema.get("type") == "integer":
            if not (value.isascii() and value.lstrip("-").isdigit()):
                problems.append({"field": name, "problem": "must be an integer"})
                continue
            value = int(value)
        problems += [
            d for e in Draft202012Validator(schema).iter_errors(value) for d in described(e, name)
        ]
        taken[name] = value
    if problems:
        raise malformed(problems)
    return taken


def checked_path(operation_id: str, arguments: dict[str, str]) -> None:
    """400 when a path parameter does not match its schema (a revision's pattern)."""
    schemas = parameters(operation_id, "path")
    problems = [
        detail
        for name, value in arguments.items()
        if name in schemas
        for found in Draft202012Validator(schemas[name]).iter_errors(value)
        for detail in described(found, name)
    ]
    if problems:
        raise malformed(problems)


def malformed(found: list[dict[str, str]], *, code: str = "invalid_request") -> Refusal:
    """The 400 for what is wrong with a request, each problem once."""
    unique = {(p["field"], p["problem"]): p for p in found}
    problems = list(unique.values())[:MAX_DETAILS]
    said = "; ".join(f"{p['field']} {p['problem']}" for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    message = f"The request is malformed: {said}{more}."
    return Refusal(400, code, message, details=problems)


TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def described(found: ValidationError, root: str = "") -> list[dict[str, str]]:
    """One ``{"field", "problem"}`` per missing field, else one for the error: words from the
    schema (what was expected), never the value sent."""
    if found.validator in ("anyOf", "oneOf") and found.context:
        branches = [e for e in found.context if e.validator_value != "null"]
        nullable = len(branches) < len(found.context)
        inner = described(best_match(branches or found.context), root)
        suffix = " (or null)" if nullable else ""
        return [{**detail, "problem": detail["problem"] + suffix} for detail in inner]
    path: list[str | int] = [root] if root else []
    path += list(found.absolute_path)
    expected = found.validator_value
    if found.validator == "required":
        present = found.instance if isinstance(found.instance, dict) else {}
        return [
            {"field": field_name([*path, name]), "problem": "is required"}
            for name in expected
            if name not in present
        ]
    return [{"field": field_name(path), "problem": problem_of(found)}]


def problem_of(found: ValidationError) -> str:
    """What the schema expected, in words."""
    expected = found.validator_value
    if found.validator == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "must be " + " or ".join(TYPE_WORDS.get(kind, kind) for kind in kinds)
    if found.validator == "enum":
        return "must be one of " + ", ".join(json.dumps(choice) for choice in expected)
    if found.validator == "minimum":
        return f"must be at least {expected}"
    if found.validator == "maximum":
        return f"must be at most {expected}"
    if found.validator == "minLength":
        return "must not be empty" if expected == 1 else f"must be at least {expected} characters"
    if found.validator == "maxLength":
        return f"must be at most {expected} characters"
    if found.validator == "pattern":
        return f"must match {expected}"
    return "has the wrong shape"
