"""drf-spectacular hooks: what every operation of the site's OpenAPI document shares."""

from typing import Any

from webui.web.long_url_guard import MAX_URL_CHARS

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

#: The API's error shape, as ``webui.api.views.ERROR`` documents it (component ``Error``).
ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": {}},
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}


def document_uri_too_long(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Every operation may answer 414 (``uri_too_long``): the long-address guard
    (``webui.web.long_url_guard``) refuses any address past its limit before a view runs."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR_SCHEMA)
    response = {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        "description": (
            f"The address (path and query string) is over {MAX_URL_CHARS} characters "
            "(uri_too_long, details.length and details.limit); nothing was read."
        ),
    }
    for item in result.get("paths", {}).values():
        for method in HTTP_METHODS:
            if method in item:
                item[method].setdefault("responses", {}).setdefault("414", response)
    return result
