"""A newcomer on the offline vessel, on a phone's width and a desktop's: ``remember``, ``recall``
and ``ask`` read back as plain sentences (a fallback recall too), the background answer arrives
under a later reply and stays there after a reload, and a recall of something still on its way to
memory says so, under the reply as well."""

import os
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in, send, start_conversation
from tests.support.outbox_delivery import deliver_all
from webui.models import Message

# Alice, Pippa and the offline vessel, with the plug-in's memory on.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("user", "soul", "offline_vessel", "memory_on"),
]

WIDTHS = [390, 1280]


def said(page: Page, text: str) -> Locator:
    """Send ``text`` and give back the reply it got."""
    send(page, text)
    return page.locator(".message.assistant").last


def new_chat_at(page: Page, base_url: str, width: int) -> None:
    """Alice logs in, in a window ``width`` wide, and starts a chat with Pippa."""
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, base_url, "alice")
    start_conversation(page, base_url)


def fits_the_window(page: Page, element: Locator) -> None:
    box = element.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= page.viewport_size["width"]


@pytest.mark.parametrize("width", WIDTHS)
def test_remember_recall_and_ask_read_as_sentences_and_the_answer_arrives_under_a_later_reply(
    live_server: Any, page: Page, width: int
) -> None:
    new_chat_at(page, live_server.url, width)

    remembered = said(page, "remember I like tea")
    expect(remembered.locator(".content")).to_have_text("I'll remember that for you: “I like tea”.")
    deliver_all()  # the outbox worker's part: the turn event reaches the engine

    # The offline vessel writes its memories as a Markdown list, and the reply shows them as one.
    recalled = said(page, "recall tea")
    expect(recalled.locator(".content p")).to_have_text("Here is what I remember about “tea”:")
    expect(recalled.locator(".content li")).to_have_text(["I like tea (you told me; just for you)"])
    fallback = said(page, "recall submarine")
    expect(fallback.locator(".content p")).to_have_text(
        "Nothing matched “submarine”, so here are the most recent memories instead:"
    )
    expect(fallback.locator(".content li")).to_have_text(["I like tea (you told me; just for you)"])

    asked = said(page, "ask what do I like")
    expect(asked.locator(".content")).to_have_text(
        "I've asked my memory; the answer will come later."
    )
    expect(asked.locator(".message-note")).to_have_count(0)

    rode = said(page, "hello")
    answer = (  # the engine here has no brain door: it says so, quoting what matched
        "Pippa could not work that out: no brain door is configured. "
        "The memories that match the question: I like tea"
    )
    note = f"Background answer to “what do I like”: {answer}"
    expect(rode.locator(".message-note")).to_have_text([note])
    expect(rode.locator(".content")).to_contain_text(
        f"About your earlier question “what do I like”: {answer}"
    )
    fits_the_window(page, rode.locator(".message-notes"))
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"speaks-{width}.png"), full_page=True)

    # The note is read from the plug-in's rows, not the conversation: a reload shows it again,
    # under that reply only, and no message holds it.
    page.reload()
    expect(page.locator(".message.assistant")).to_have_count(5)
    expect(page.locator(".message-note")).to_have_text([note])
    expect(page.locator(".message.assistant").nth(4).locator(".message-note")).to_have_text([note])
    assert not Message.objects.filter(content__contains="Background answer").exists()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_recall_of_what_is_still_on_its_way_to_memory_says_so(
    live_server: Any, page: Page, width: int
) -> None:
    new_chat_at(page, live_server.url, width)

    said(page, "remember I like green tea")  # its turn event is not delivered yet
    recalled = said(page, "recall tea")

    expect(recalled.locator(".content")).to_have_text(
        "I noted “I like green tea” a moment ago; it is on its way to memory.\n"
        "Nothing else about “tea” is in memory yet."
    )
    expect(recalled.locator(".message-note")).to_have_text(
        ["On its way to memory when this was recalled: “I like green tea”"]
    )
    fits_the_window(page, recalled.locator(".message-notes"))
