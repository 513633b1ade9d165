"""The offline vessel: it answers itself, so only its requests are read."""

import json
from typing import Any

from provider_doubles.base import Kit


class OfflineKit(Kit):
    """The offline vessel answers itself; its requests are captured before it does."""

    adapter = "offline"
    key_env = None

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        calls = [p["id"] for p in request["messages"][-2]["content"] if p["type"] == "tool_call"]
        results = [p["tool_call_id"] for p in request["messages"][-1]["content"]]
        return calls, results

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        last = request["messages"][-1]
        if last["role"] == "tool":
            return None, [json.loads(p["output"]) for p in last["content"]]
        return last["content"][0]["text"], []

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [t["name"] for t in request.get("tools", [])]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["input_schema"]
