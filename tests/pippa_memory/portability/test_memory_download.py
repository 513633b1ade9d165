"""``GET /api/memory/export/``: two members against the reference engine over a socket. Each
downloads, as JSON Lines and as Markdown, their own memories and the household's (others' marked
with who said them), never the other member's private ones; a stranger is refused; an engine that
is down is a 503 before anything is sent."""

import json
from typing import Any

import pytest
from django.test import Client

from pippa_memory.portability import file_format
from reference_engine.server import ReferenceEngine
from tests.support.household_memory import add_memory

pytestmark = pytest.mark.django_db

EXPORT = "/api/memory/export/"


@pytest.fixture
def household(memory_on: ReferenceEngine, soul: Any, user: Any, bob: Any) -> ReferenceEngine:
    add_memory(memory_on, "Alice hides the biscuits.", scope="private", by=user)
    add_memory(memory_on, "The bins go out on Tuesday.", by=user)
    add_memory(memory_on, "Bob is planning a surprise.", scope="private", by=bob)
    add_memory(memory_on, "The boiler code is 4471.", by=bob)
    add_memory(memory_on, "The garden was watered.")
    return memory_on


def download(user: Any, kind: str) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(EXPORT, {"soul": "pippa", "format": kind})


def body_of(response: Any) -> str:
    return b"".join(response.streaming_content).decode("utf-8")


def test_a_json_download_holds_own_and_household_memories_never_another_members_private(
    household: ReferenceEngine, user: Any, bob: Any
) -> None:
    for member, own, theirs in ((user, "biscuits", "surprise"), (bob, "surprise", "biscuits")):
        response = download(member, "json")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/x-ndjson")
        text = body_of(response)
        assert own in text
        assert theirs not in text
        header, *lines = [json.loads(line) for line in text.splitlines()]
        assert not list(file_format.validator("header").iter_errors(header))
        assert header["kind"] == "member"
        assert header["member"]["member"] == str(member.pk)
        for line in lines:
            assert not list(file_format.validator("memory").iter_errors(line))
        assert len(lines) == 4  # their private one, three household ones
        marked = {line["text"]: (line["yours"], line["said_by"]) for line in lines}
        assert marked["The garden was watered."] == (False, None)


def test_household_memories_said_by_others_are_marked_with_who_said_them(
    household: ReferenceEngine, user: Any
) -> None:
    lines = [json.loads(line) for line in body_of(download(user, "json")).splitlines()[1:]]
    boiler = next(line for line in lines if "boiler" in line["text"])

    assert boiler["yours"] is False
    assert boiler["said_by"]["name"] == "Bob"
    assert boiler["source"] == {"conversation": None, "message": None, "tool_use": None}


def test_the_markdown_download_is_grouped_by_month_and_says_who_said_what(
    household: ReferenceEngine, user: Any, bob: Any
) -> None:
    response = download(user, "markdown")
    text = body_of(response)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert text.startswith("---\nsoul: pippa\n")
    assert "\n## " in text
    assert "(private, said by you): Alice hides the biscuits." in text
    assert "(household, said by Bob): The boiler code is 4471." in text
    assert "(household, kept by an unattended run): The garden was watered." in text
    assert "surprise" not in text
    assert "biscuits" not in body_of(download(bob, "markdown"))


def test_a_stranger_is_refused_and_an_engine_down_is_503_before_anything_is_sent(
    household: ReferenceEngine, user: Any
) -> None:
    anonymous = Client().get(EXPORT, {"soul": "pippa", "format": "json"})
    bad_format = download(user, "pdf")
    empty_format = download(user, "")
    household.set_fault("down")
    down = download(user, "markdown")

    assert anonymous.status_code == 403
    assert bad_format.status_code == 400
    assert empty_format.status_code == 400
    assert "format" in empty_format.json()["error"]["details"]
    assert down.status_code == 503
    assert down.json()["error"]["code"] == "memory_unavailable"


def test_the_memory_page_links_both_downloads(household: ReferenceEngine, user: Any) -> None:
    client = Client()
    client.force_login(user)
    page = client.get("/memory/", {"soul": "pippa"}).content.decode()

    assert "/api/memory/export/?soul=pippa&amp;format=markdown" in page
    assert "/api/memory/export/?soul=pippa&amp;format=json" in page
