"""Gemini's generateContent API, as its reference documents it."""

from typing import Any

from provider_doubles.base import USAGE, Kit, pieces


class GeminiKit(Kit):
    adapter = "gemini"
    model = "gemini-2.5-flash"
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    messages_key = "contents"
    has_ids = False

    def _response(self, parts: list[Any]) -> dict[str, Any]:
        return {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": USAGE["prompt"],
                "candidatesTokenCount": USAGE["output"],
                "totalTokenCount": USAGE["prompt"] + USAGE["output"],
                "cachedContentTokenCount": USAGE["cached"],
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": USAGE["prompt"]}],
            },
            "modelVersion": self.model,
            "responseId": "mI3EaJ2aBrKvkdUPyIeQ-AQ",
        }

    def text_body(self, text: str) -> dict[str, Any]:
        return self._response([{"text": text}])

    def call_body(self, calls: list[dict[str, Any]], text: str = "") -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        parts.extend(
            {
                "functionCall": {"name": call["name"], "args": call["input"]},
                "thoughtSignature": "CiQBVKhc7oJ8" + call["id"][-4:],
            }
            for call in calls
        )
        return self._response(parts)

    @property
    def stream_url(self) -> str:
        return self.url.replace(":generateContent", ":streamGenerateContent?alt=sse")

    def stream_records(self, calls: list[dict[str, Any]], text: str = "") -> list[Any]:
        # Each event is a whole GenerateContentResponse with the next parts; function calls
        # come whole, and the last event has the finish reason and the full usage.
        final = self.call_body(calls) if calls else self.text_body("")
        records = []
        for piece in pieces(text):
            record = self._response([{"text": piece}])
            del record["candidates"][0]["finishReason"]
            record["usageMetadata"] = {
                "promptTokenCount": USAGE["prompt"],
                "totalTokenCount": USAGE["prompt"],
            }
            records.append(record)
        if not calls:
            final["candidates"][0]["content"]["parts"] = []
        return [*records, final]

    def stream_error(self) -> Any:
        return {
            "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
        }

    def call_links(self, request: dict[str, Any]) -> tuple[list[str], list[str]]:
        # Gemini pairs a response with its call by name and position (or by id on newer models).
        calls = [
            p["functionCall"]["name"]
            for p in request["contents"][-2]["parts"]
            if "functionCall" in p
        ]
        results = [p["functionResponse"]["name"] for p in request["contents"][-1]["parts"]]
        return calls, results

    def error(self, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, code = {
            "rate_limited": (429, "RESOURCE_EXHAUSTED"),
            "overloaded": (503, "UNAVAILABLE"),
            "server_error": (500, "INTERNAL"),
            "auth_failed": (401, "UNAUTHENTICATED"),
            "forbidden": (403, "PERMISSION_DENIED"),
            "bad_request": (400, "INVALID_ARGUMENT"),
        }[kind]
        body = {"error": {"code": status, "message": f"Gemini says {kind}", "status": code}}
        return status, body, {"Retry-After": "3"} if kind == "rate_limited" else {}

    def error_code(self, body: dict[str, Any]) -> str | None:
        return body["error"]["status"]

    def last_turn(self, request: dict[str, Any]) -> tuple[str | None, list[Any]]:
        parts = request["contents"][-1]["parts"]
        results = [p["functionResponse"]["response"] for p in parts if "functionResponse" in p]
        return (None, results) if results else (parts[0]["text"], [])

    def tool_names(self, request: dict[str, Any]) -> list[str]:
        return [d["name"] for t in request.get("tools", []) for d in t["functionDeclarations"]]

    def tool_schema(self, request: dict[str, Any]) -> dict[str, Any]:
        return request["tools"][0]["functionDeclarations"][0]["parameters"]

    def auth_ok(self, headers: Any) -> bool:
        return headers.get("x-goog-api-key") == "sk-test-SECRET"
