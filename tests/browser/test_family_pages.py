"""Issue 27 in a real browser, as a plain household member at 390 and 1280 px: "Pippa's memory in
this chat" shows what an older conversation's memory holds and that a memory came since, and
"Bring up to date" makes the next reply carry it; a chat error shows in view next to the
composer in a conversation of 30 turns; a rename's result shows where it was made; member pages
speak a family's words; and the smaller promises (the secondary Forget…, buttons that do not
touch, the scope menu at 390 px, the status line after Stop, a logout that says so)."""

import os
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from pippa_memory.models import PinRecord
from tests.browser.test_chat_flow import SCREENSHOTS, log_in
from tests.browser.test_memory_tool_flow import send, start_conversation
from tests.browser.test_streaming_chat import LONG, WRITING_TEXT, slow_offline_vessel  # noqa: F401 (fixture)
from tests.browser.test_two_members_memory import pinned_block_text
from tests.pippa_memory.test_memory_privacy import deliver_all
from tests.support.household_memory import add_memory, said_in_chat
from tests.support.layout import PHONE, WIDTHS, assert_fits, box_of, inside_viewport
from webui.conf import webui_settings
from webui.models import Conversation, Message

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHARED = "The bins go out on Tuesday."
#: Words for the people who run the household, not for the family's pages.
STAFF_WORDS = re.compile(r"\b(vessels?|llm|engine|unattended runs?|events?)\b", re.IGNORECASE)


def at_width(page: Page, width: int, height: int = 800) -> None:
    page.set_viewport_size({"width": width, "height": height})


def not_covered(page: Page, selector: str) -> bool:
    """Whether the element's centre shows the element itself (nothing lies over it)."""
    return page.evaluate(
        """(selector) => {
          const el = document.querySelector(selector);
          const box = el.getBoundingClientRect();
          const top = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
          return el === top || el.contains(top);
        }""",
        selector,
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_an_older_chat_shows_its_memory_and_bring_up_to_date_makes_the_next_reply_know_it(
    live_server: Any,
    page: Page,
    user: Any,
    soul: Any,
    offline_vessel: Any,
    memory_on: Any,
    width: int,
) -> None:
    at_width(page, width)
    add_memory(memory_on, SHARED)
    log_in(page, live_server.url, "alice")
    start_conversation(page, live_server.url)
    send(page, "hello")
    older = Conversation.objects.get(viewer=user)
    start_conversation(page, live_server.url)
    send(page, "remember I like tea")
    deliver_all()

    page.goto(f"{live_server.url}/conversations/{older.pk}/")
    panel = page.locator("#memory-panel")
    summary = panel.locator("summary")
    # Collapsed, one line, and it already says that one memory came since.
    expect(summary).to_contain_text("memory in this chat")
    expect(summary).to_contain_text("1 new since")
    expect(panel.locator("#memory-panel-items")).to_be_hidden()
    line_height = float(summary.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)"))
    assert box_of(summary)["height"] < 2 * line_height, "the closed panel is not one line"
    assert summary.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "its line is cut"
    assert_fits(page, "the conversation with its memory panel")

    summary.click()
    items = panel.locator("#memory-panel-items")
    heading = panel.locator("#memory-panel-heading")
    expect(heading).to_have_text("What Pippa knew when this chat began")
    expect(items).to_contain_text(SHARED)
    expect(items).to_contain_text("The household's")
    expect(items.locator(".scope")).to_have_text(["Household"])
    expect(items).not_to_contain_text("I like tea")
    expect(panel.locator("#memory-panel-newer")).to_contain_text("1 memory came since")
    expect(panel).to_contain_text("one prompt-cache miss")

    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"memory-panel-{width}.png"))
    panel.get_by_role("button", name="Bring up to date").click()
    # One sentence says what happens now, once; nothing is offered while the chat waits.
    expect(heading).to_have_text("Pippa takes her memory afresh at your next message")
    expect(panel.get_by_text("afresh at your next message")).to_have_count(1)
    expect(panel.get_by_role("button", name="Bring up to date")).to_be_hidden()
    expect(summary).to_contain_text("not taken yet")
    assert PinRecord.objects.filter(conversation=older, reason="member_refresh").exists()
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"memory-panel-waiting-{width}.png"))

    send(page, "what do you know now?")
    assert "I like tea" in pinned_block_text(older)
    expect(items).to_contain_text("I like tea")
    expect(items).to_contain_text("You said it")
    expect(items.locator(".scope")).to_have_text(["Private to you", "Household"])
    expect(heading).to_contain_text("What Pippa knew when you brought it up to date at ")
    expect(panel.locator("#memory-panel-newer")).to_contain_text("up to date")
    expect(panel.get_by_role("button", name="Bring up to date")).to_be_hidden()
    expect(summary).to_contain_text("up to date")
    assert_fits(page, "the conversation after bringing it up to date")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"memory-panel-refreshed-{width}.png"))

    # Memory out of reach: one sentence, and nothing offered.
    memory_on.set_fault("error", status=503, paths=["/v1/souls/pippa/items"])
    add_memory(memory_on, "The cat is called Biscuit.")
    page.reload()
    summary.click()
    expect(heading).to_contain_text("Pippa's memory cannot be reached right now")
    expect(panel.get_by_role("button", name="Bring up to date")).to_be_hidden()
    expect(items).to_be_hidden()
    assert summary.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "its line is cut"


def thirty_turns(member: Any, soul: Any, vessel: Any) -> Conversation:
    conversation = Conversation.objects.create(
        soul=soul, vessel=vessel, viewer=member, title="Thirty turns"
    )
    for turn in range(30):
        asked = Message.objects.create(
            conversation=conversation, role="user", content=f"Question {turn} about the garden?"
        )
        Message.objects.create(
            conversation=conversation,
            role="assistant",
            content=f"Answer {turn}: water the tomatoes.\n" * 3,
            reply_to=asked,
        )
    return conversation


@pytest.mark.parametrize("width", WIDTHS)
def test_a_message_over_the_limit_in_a_long_chat_shows_its_error_in_view(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Any, width: int
) -> None:
    at_width(page, width, 700)
    conversation = thirty_turns(user, soul, offline_vessel)
    limit = webui_settings.MAX_MESSAGE_CHARS
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/conversations/{conversation.pk}/")
    expect(page.locator(".message")).to_have_count(60)
    box = page.get_by_label("Message")
    assert box.get_attribute("maxlength") is None, "a maxlength would cut a paste silently"

    # Text put there by a script (no input event) still meets the rule when sent.
    page.evaluate("(n) => { document.getElementById('text').value = 'x'.repeat(n); }", limit + 1)
    page.get_by_role("button", name="Send").click()

    error = page.get_by_role("alert").filter(has_text="at most")
    expect(error).to_be_visible()
    expect(error).to_contain_text("Nothing was sent")
    assert inside_viewport(page, error), "the error is outside the window"
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"error-in-view-{width}.png"))
    assert not_covered(page, "#chat-error"), "something covers the error"
    assert Message.objects.filter(conversation=conversation).count() == 60

    # Scrolled to the top to read, then a second refusal: in view again.
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_role("button", name="Send").click()
    assert inside_viewport(page, error), "the error is outside the window after scrolling"
    assert_fits(page, "the long conversation with an error")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_renames_result_shows_where_the_rename_was_made(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Any, width: int
) -> None:
    at_width(page, width, 700)
    conversation = thirty_turns(user, soul, offline_vessel)
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/conversations/{conversation.pk}/")

    page.get_by_text("Rename or delete").click()
    title = page.get_by_label("New title")
    assert title.get_attribute("maxlength") == "200"
    title.fill("Garden plans")
    page.get_by_role("button", name="Rename").click()

    notice = page.get_by_role("status").filter(has_text="The conversation is renamed.")
    expect(notice).to_be_visible()
    expect(page.locator("#conversation-title")).to_have_text("Garden plans")
    page.wait_for_timeout(300)  # the history has been drawn; the page must not have moved away
    assert inside_viewport(page, notice), "the rename's result is scrolled away"
    assert inside_viewport(page, page.locator("#conversation-title"))


def visible_text(page: Page) -> str:
    return page.locator("body").inner_text()


def test_a_plain_members_pages_speak_a_familys_words(
    live_server: Any, page: Page, user: Any, soul: Any, offline_vessel: Any, memory_on: Any
) -> None:
    at_width(page, PHONE)
    add_memory(memory_on, SHARED)
    # A seeded private memory of hers, said in no chat: kept for her, not "You said it".
    add_memory(memory_on, "Alice is planning a party.", scope="private", by=user)
    log_in(page, live_server.url, "alice")
    start_conversation(page, live_server.url)
    send(page, "recall bins")
    conversation = Conversation.objects.get(viewer=user)

    tool_use = page.locator(".message.assistant").last.locator("details.tool-use")
    expect(tool_use.locator("summary").first).to_have_text(
        "Pippa looked in her memory for “bins” and found 1 thing."
    )
    tool_use.locator("summary").first.click()
    expect(tool_use.locator("pre").first).to_be_hidden()
    expect(tool_use).not_to_contain_text("Tool:")
    tool_use.get_by_text("The raw call").click()
    expect(tool_use.locator("pre").first).to_be_visible()
    tool_use.get_by_text("The raw call").click()  # closed again: what was for the model hides

    pages = {
        "the conversation page": f"/conversations/{conversation.pk}/",
        "the conversation list": "/",
        "the new conversation page": "/conversations/new/",
        "the memory page": "/memory/",
        "the Soul Stream": "/stream/",
        "the models page": "/vessels/",
    }
    for name, path in pages.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        words = visible_text(page)
        found = sorted({match.lower() for match in STAFF_WORDS.findall(words)})
        assert found == [], f"{name} says {found}"
        assert "Say so if you use them" not in words, f"{name} shows words for the model"
    page.goto(f"{live_server.url}/memory/")
    party = page.locator(".memory-item").filter(has_text="Alice is planning a party.")
    expect(party).to_contain_text("Kept for you")
    expect(party).not_to_contain_text("You said it")
    expect(page.locator("#memory-forgetting")).to_contain_text("open it and choose")

    page.get_by_role("button", name="Log out alice").click()
    expect(page.get_by_role("status")).to_contain_text("You are logged out.")
    assert STAFF_WORDS.findall(visible_text(page)) == []


def test_forget_is_secondary_buttons_do_not_touch_and_the_scope_menu_fits_at_390(
    live_server: Any, page: Page, user: Any, soul: Any, memory_on: Any
) -> None:
    at_width(page, PHONE)
    item = add_memory(memory_on, "Alice hides the biscuits.", by=user, source=said_in_chat())
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/memory/")

    entry = page.locator(f"#item-{item}")
    forget = entry.get_by_role("link", name="Forget: Alice hides the biscuits.")
    share = entry.get_by_role("button", name="Make private to me")
    main = page.locator("#memory-preference").get_by_role("button", name="Save")
    background = "el => getComputedStyle(el).backgroundColor"
    assert forget.evaluate(background) != main.evaluate(background), "Forget… looks like Save"
    assert forget.evaluate(background) == "rgb(255, 255, 255)"
    assert apart(box_of(forget), box_of(share)), "Forget… and its neighbour touch"

    # The default scope's two choices are whole on the screen, each with its words.
    for choice in ("Private: only you see it", "Household: everyone sees it"):
        option = page.get_by_label(choice)
        expect(option).to_be_visible()
        label = box_of(page.locator("#memory-preference label").filter(has_text=choice))
        assert label["x"] >= 0
        assert label["x"] + label["width"] <= PHONE, f"“{choice}” is cut at 390 px"
    assert_fits(page, "the memory page")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "memory-page-390.png"), full_page=True)

    forget.click()
    confirm = page.get_by_role("button", name="Forget it")
    keep = page.get_by_role("link", name="Keep it")
    assert apart(box_of(confirm), box_of(keep)), "Forget it and Keep it touch"


def apart(one: dict[str, float], other: dict[str, float], gap: float = 4) -> bool:
    """Whether two boxes are at least ``gap`` px apart, side by side or one above the other."""
    side = max(other["x"] - (one["x"] + one["width"]), one["x"] - (other["x"] + other["width"]))
    stacked = max(
        other["y"] - (one["y"] + one["height"]), one["y"] - (other["y"] + other["height"])
    )
    return max(side, stacked) >= gap


def test_after_stop_the_status_line_no_longer_says_the_reply_is_being_written(
    live_server: Any,
    page: Page,
    user: Any,
    conversation: Conversation,
    slow_offline_vessel: None,  # noqa: F811
) -> None:
    at_width(page, PHONE)
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}{conversation.get_absolute_url()}")
    page.get_by_label("Message").fill(LONG)
    page.get_by_role("button", name="Send").click()
    page.wait_for_function(WRITING_TEXT)
    # Every text the status line shows from the moment Stop is pressed.
    page.evaluate(
        """() => {
          const status = document.getElementById("status");
          window.statusSeen = [];
          new MutationObserver(() => window.statusSeen.push(status.textContent))
            .observe(status, { childList: true, characterData: true, subtree: true });
        }"""
    )
    page.get_by_role("button", name="Stop").click()

    expect(page.locator(".message.assistant.stopped")).to_be_visible()
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    seen = page.evaluate("window.statusSeen")
    after_stop = seen[seen.index("Stopping…") :]
    assert not [text for text in after_stop if "being written" in text], seen
    expect(page.locator("#status")).to_have_text("Stopped.")
