"""A logged-in member's cookies on every case schemathesis generates, for the API fuzz tests."""

from typing import Any

import requests


def cookies_on_each_case(schema: Any, session: requests.Session) -> None:
    """Move ``session``'s login and CSRF cookies onto each generated case instead, so a case that
    leaves one out goes without it."""
    cookies = {name: session.cookies[name] for name in ("sessionid", "csrftoken")}
    session.cookies.clear()

    @schema.auth()
    class MemberSession:
        def get(self, case: Any, ctx: Any) -> dict[str, str]:
            return cookies

        def set(self, case: Any, data: dict[str, str], ctx: Any) -> None:
            case.cookies = {**(case.cookies or {}), **data}
