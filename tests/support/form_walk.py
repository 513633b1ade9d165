"""A walk over the site's pages and the forms on them, as a browser would find and submit them.

:func:`walk_pages` follows the site's own links from a start page; :func:`forms_on` reads each
page's ``<form>``\\ s (method, action, and the fields a browser would send, the submit button
included); :func:`encoded` builds the urlencoded body a browser sends, with one field's value
replaced by raw bytes (a lone surrogate is not UTF-8, so it can only travel percent-encoded).
"""

from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote_from_bytes, urljoin, urlsplit

#: Never followed: the admin has its own walks, the API its schemathesis run, and static files
#: and the logout link hold no form.
NOT_WALKED = ("/admin/", "/api/", "/static/", "/accounts/logout/")


@dataclass
class Form:
    """One form as a browser submits it: where, how, and the name-value pairs it sends."""

    page: str
    method: str
    action: str
    fields: list[tuple[str, str, str]] = field(default_factory=list)  # (name, kind, value)
    form_id: str = ""

    @property
    def label(self) -> str:
        return f"{self.method} {self.action} (on {self.page})"


class FormReader(HTMLParser):
    """The forms of one page and the same-site links on it."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.forms: list[Form] = []
        self.links: list[str] = []
        self.open: Form | None = None
        self.textarea: tuple[str, list[str]] | None = None
        self.select: str | None = None
        self.options: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {name: value or "" for name, value in attrs}
        if tag == "a" and given.get("href"):
            self.links.append(urljoin(self.page, given["href"]))
        elif tag == "form":
            action = urljoin(self.page, given.get("action") or self.page)
            method = (given.get("method") or "get").upper()
            self.open = Form(self.page, method, action, form_id=given.get("id", ""))
            self.forms.append(self.open)
        elif self.open is not None and given.get("name"):
            self.read_field(tag, given)
        elif tag == "option" and self.select is not None:
            self.options.append((given.get("value", ""), "selected" in given))

    def read_field(self, tag: str, given: dict[str, str]) -> None:
        assert self.open is not None
        name, kind = given["name"], given.get("type", "text").lower()
        if tag == "textarea":
            self.textarea = (name, [])
        elif tag == "select":
            self.select, self.options = name, []
        elif tag == "button" or kind in ("submit", "image"):
            self.open.fields.append((name, "submit", given.get("value", "")))
        elif kind in ("checkbox", "radio"):
            if "checked" in given or not any(f[0] == name for f in self.open.fields):
                self.open.fields = [f for f in self.open.fields if f[0] != name or kind != "radio"]
                self.open.fields.append((name, kind, given.get("value", "on")))
        elif tag == "input":
            self.open.fields.append((name, kind, given.get("value", "")))

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.textarea[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.open = None
        elif tag == "textarea" and self.textarea is not None and self.open is not None:
            self.open.fields.append((self.textarea[0], "textarea", "".join(self.textarea[1])))
            self.textarea = None
        elif tag == "select" and self.select is not None and self.open is not None:
            chosen = [value for value, selected in self.options if selected] or [
                value for value, _ in self.options[:1]
            ]
            self.open.fields.append((self.select, "select", chosen[0] if chosen else ""))
            self.select = None


def forms_on(page: str, html: str) -> tuple[list[Form], list[str]]:
    """The forms on a page and the links it holds."""
    reader = FormReader(page)
    reader.feed(html)
    return reader.forms, reader.links


def walk_pages(client: Any, start: str, *, limit: int = 60) -> dict[str, list[Form]]:
    """Every same-site page reachable from ``start`` by links (up to ``limit``), with its forms."""
    seen: dict[str, list[Form]] = {}
    queue = deque([start])
    while queue and len(seen) < limit:
        page = queue.popleft()
        if page in seen:
            continue
        answer = client.get(page)
        seen[page] = []
        if answer.status_code != 200 or "text/html" not in answer.get("Content-Type", ""):
            continue
        forms, links = forms_on(page, answer.content.decode())
        seen[page] = forms
        for link in links:
            parts = urlsplit(link)
            if parts.netloc not in ("", "testserver") or parts.path.startswith(NOT_WALKED):
                continue
            queue.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return seen


def encoded(pairs: list[tuple[str, str | bytes]]) -> str:
    """The urlencoded body of ``pairs``; a bytes value goes as it is, already percent-encoded."""
    return "&".join(
        quote_from_bytes(name.encode(), safe="")
        + "="
        + (value.decode("ascii") if isinstance(value, bytes) else quote_from_bytes(value.encode()))
        for name, value in pairs
    )
