"""The contract documents say what the code does: every call the client knows is in the OpenAPI
document, and the document's answer schemas require what the client's schemas require."""

from pathlib import Path

import pytest
import yaml

from pippa_memory import contract

ROOT = Path(__file__).resolve().parents[2]
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
]


def resolve(schema: dict) -> dict:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = OPENAPI["components"]["schemas"][name]
    return schema


@pytest.mark.parametrize(("method", "path", "status", "schema"), CALLS, ids=[c[1] for c in CALLS])
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


def test_the_document_is_openapi_3_with_bearer_auth() -> None:
    assert OPENAPI["openapi"].startswith("3.")
    assert OPENAPI["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
