"""The contract documents say what the code does: every call the client knows is in the OpenAPI
document, the document's answer schemas require what the client's schemas require (down to the
memory item), every call names the contract version, and the turn event sends no field the
documents leave out."""

from pathlib import Path
from typing import Any

import pytest
import yaml

from pippa_memory.engine import contract
from pippa_memory.outbox.events import turn_event_payload
from webui.models import Message

ROOT = Path(__file__).resolve().parents[3]
OPENAPI = yaml.safe_load((ROOT / "docs" / "engine-openapi.yaml").read_text(encoding="utf-8"))
PROSE = (ROOT / "docs" / "engine-contract.md").read_text(encoding="utf-8")

CALLS = [
    ("get", "/v1/souls/{soul}/head", "200", contract.BLOCK),
    ("get", "/v1/souls/{soul}/blocks/{revision}", "200", contract.BLOCK),
    ("post", "/v1/events", "202", None),
    ("post", "/v1/recall", "200", contract.RECALL),
    ("post", "/v1/asks", "202", contract.ASK),
    ("get", "/v1/conversations/{id}/answers", "200", contract.ANSWERS),
    ("post", "/v1/conversations/{id}/answers/ack", "204", None),
    ("post", "/v1/wakes/brief", "200", contract.BRIEF),
    ("post", "/v1/bundles", "200", contract.BUNDLE),
    ("get", "/v1/souls/{soul}/items", "200", contract.ITEMS),
    ("get", "/v1/souls/{soul}/members", "200", contract.MEMBERS),
    ("delete", "/v1/souls/{soul}/items/{id}", "200", contract.FORGOTTEN),
    ("patch", "/v1/souls/{soul}/items/{id}", "200", contract.RESCOPED),
    ("post", "/v1/souls/{soul}/members/{member}/forget", "200", contract.FORGOTTEN_MEMBER),
    ("get", "/v1/souls/{soul}/export", "200", contract.EXPORT_PAGE),
    ("post", "/v1/souls/{soul}/import", "200", contract.IMPORTED),
    ("get", "/v1/souls/{soul}/items/{id}", "200", contract.ITEM_FOUND),
    ("post", "/v1/souls/{soul}/items", "201", contract.ITEM_FOUND),
    ("post", "/v1/souls/{soul}/items/{id}/correct", "200", contract.ITEM_FOUND),
    ("post", "/v1/souls/{soul}/items/{id}/restore", "200", contract.ITEM_FOUND),
]


ANSWERED = [call for call in CALLS if call[3] is not None]


def resolve(schema: dict) -> dict:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = OPENAPI["components"]["schemas"][name]
    return schema


@pytest.mark.parametrize(
    ("method", "path", "status", "schema"), CALLS, ids=[f"{c[0]} {c[1]}" for c in CALLS]
)
def test_every_call_is_documented_with_the_schema_the_client_enforces(
    method: str, path: str, status: str, schema: dict | None
) -> None:
    operation = OPENAPI["paths"][path][method]
    assert status in operation["responses"]
    assert f"`{method.upper()} {path}`" in PROSE
    if schema is None:
        return
    documented = resolve(operation["responses"][status]["content"]["application/json"]["schema"])
    assert sorted(documented["required"]) == sorted(schema["required"])
    assert sorted(documented["properties"]) == sorted(schema["properties"])


def same_fields(documented: dict, schema: dict, where: str) -> list[str]:
    """Where ``documented`` (OpenAPI) and ``schema`` (contract.py) differ in required or named
    fields, walking into nested objects, arrays and nullable references."""
    documented = resolve(documented)
    if "allOf" in documented:
        documented = resolve(documented["allOf"][0])
    if "oneOf" in schema:
        schema = next(s for s in schema["oneOf"] if s.get("type") != "null")
    if "items" in schema and isinstance(schema["items"], dict):
        return same_fields(documented.get("items", {}), schema["items"], f"{where}[]")
    if "properties" not in schema:
        return []
    problems = []
    if sorted(documented.get("required", [])) != sorted(schema.get("required", [])):
        problems.append(f"{where}: required")
    if sorted(documented.get("properties", {})) != sorted(schema["properties"]):
        return [*problems, f"{where}: properties"]
    for key, inner in schema["properties"].items():
        problems += same_fields(documented["properties"][key], inner, f"{where}.{key}")
    return problems


@pytest.mark.parametrize(
    ("method", "path", "status", "schema"), ANSWERED, ids=[f"{c[0]} {c[1]}" for c in ANSWERED]
)
def test_every_answer_is_documented_field_for_field_down_to_the_memory_item(
    method: str, path: str, status: str, schema: dict
) -> None:
    operation = OPENAPI["paths"][path][method]
    documented = operation["responses"][status]["content"]["application/json"]["schema"]

    assert same_fields(documented, schema, path) == []


def test_the_memory_item_is_documented_as_the_client_enforces_it() -> None:
    documented = OPENAPI["components"]["schemas"]["Item"]

    assert same_fields(documented, contract.ITEM, "Item") == []
    kept = OPENAPI["components"]["schemas"]["KeptItem"]
    assert same_fields(kept, contract.KEPT_ITEM, "KeptItem") == []
    outcomes = contract.DECISION["properties"]["outcome"]["enum"]
    assert kept["properties"]["decision"]["properties"]["outcome"]["enum"] == outcomes
    assert (
        resolve(documented["properties"]["scope"])["enum"]
        == contract.ITEM["properties"]["scope"]["enum"]
    )


@pytest.mark.parametrize(
    ("method", "path", "status", "schema"), CALLS, ids=[f"{c[0]} {c[1]}" for c in CALLS]
)
def test_every_call_names_the_contract_version_the_client_speaks(
    method: str, path: str, status: str, schema: dict | None
) -> None:
    name, version = contract.CONTRACT_HEADER
    parameters = OPENAPI["components"]["parameters"]
    operation = OPENAPI["paths"][path][method]
    named = [
        parameters[p["$ref"].rsplit("/", 1)[-1]] if "$ref" in p else p
        for p in operation["parameters"]
    ]

    (header,) = [p for p in named if p["name"] == name]
    assert header["in"] == "header"
    assert header["schema"]["enum"] == [version]
    assert OPENAPI["info"]["version"] == version
    assert f"`{name}: {version}`" in PROSE


def test_the_document_is_openapi_3_with_bearer_auth() -> None:
    assert OPENAPI["openapi"].startswith("3.")
    assert OPENAPI["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def contract_keys(value: Any, schema: dict, where: str = "event") -> dict[str, bool]:
    """``{"where.key": documented}`` for every key of ``value`` the contract is about.

    An object documented with no properties (a tool's free-form input and output) may hold any
    keys, so nothing inside it is listed.
    """
    schema = resolve(schema)
    found: dict[str, bool] = {}
    if isinstance(value, dict) and "properties" in schema:
        properties = schema["properties"]
        for key, item in value.items():
            found[f"{where}.{key}"] = key in properties
            if key in properties:
                found.update(contract_keys(item, properties[key], f"{where}.{key}"))
    elif isinstance(value, list) and "items" in schema:
        for item in value:
            found.update(contract_keys(item, schema["items"], f"{where}[]"))
    return found


@pytest.mark.django_db
def test_the_turn_event_sends_only_fields_the_contract_documents(conversation: Any) -> None:
    message = Message.objects.create(
        conversation=conversation,
        role="assistant",
        content="Noted.",
        vessel=conversation.vessel,
        tool_uses=[
            {
                "id": "call-1",
                "name": "memory",
                "input": {"verb": "remember", "text": "The bins go out on Tuesday."},
                "output": {"ok": True},
            }
        ],
    )

    payload = turn_event_payload(event_id="e1", message=message)

    assert payload["message"]["tool_uses"][0]["verb"] == "remember"
    body = OPENAPI["paths"]["/v1/events"]["post"]["requestBody"]["content"]["application/json"]
    keys = contract_keys(payload, body["schema"])
    assert [where for where, documented in keys.items() if not documented] == []
    names = {where.rsplit(".", 1)[-1] for where in keys}
    assert sorted(name for name in names if f'"{name}"' not in PROSE) == []
