"""The chat page as a member meets it, at a phone's width (390 px) and a desktop's (1280 px), in a
real browser against a live server: replies in Markdown (a list is a list, a script is text, a
member's own words as written), the title as soon as the first turn sets it, rename and delete,
search and day groups, temporary chats, and the composer (Enter, Shift+Enter, the character count,
a message over the limit refused before sending, the memory hint only where the tool is on)."""

import os
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from tests.support.browser_pages import SCREENSHOTS, log_in
from tests.support.fakes import ScriptedStreamAdapter
from webui.models import Conversation, Message
from webui.vessels import registry

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKDOWN_REPLY = (
    "Here you go:\n\n"
    "- tea\n"
    "- **cake**\n\n"
    "```python\nprint('hi')\n```\n\n"
    "<script>window.pwned = true</script>\n\n"
    '<img src="x" onerror="window.pwned = true">\n\n'
    "[a link](javascript:window.pwned=true) and [a real one](https://example.org/)"
)
NO_HORIZONTAL_SCROLL = "() => document.documentElement.scrollWidth <= window.innerWidth"


@pytest.fixture
def page(phone_or_desktop_page: Page) -> Page:
    """Every test here runs at a phone's width, then at a desktop's."""
    return phone_or_desktop_page


@pytest.fixture
def markdown_vessel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The conversation's vessel answers with :data:`MARKDOWN_REPLY`, streamed in three pieces."""
    third = len(MARKDOWN_REPLY) // 3
    pieces = (
        MARKDOWN_REPLY[:third],
        MARKDOWN_REPLY[third : 2 * third],
        MARKDOWN_REPLY[2 * third :],
    )
    monkeypatch.setattr(ScriptedStreamAdapter, "pieces", pieces)
    monkeypatch.setattr(ScriptedStreamAdapter, "between", None)
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", ScriptedStreamAdapter)


def open_conversation(page: Page, live_server: Any, conversation: Conversation) -> None:
    page.goto(f"{live_server.url}{conversation.get_absolute_url()}")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


def expect_the_markdown_reply(page: Page) -> None:
    reply = page.locator(".message.assistant:not(.writing) .content")
    expect(reply.locator("ul > li")).to_have_text(["tea", "cake"])
    expect(reply.locator("ul strong")).to_have_text("cake")
    expect(reply.locator("pre > code.language-python")).to_have_text("print('hi')\n")
    expect(reply).to_contain_text("<script>window.pwned = true</script>")
    expect(reply).to_contain_text('<img src="x" onerror="window.pwned = true">')
    expect(reply.locator("script, img, [onerror]")).to_have_count(0)
    expect(reply.locator("a")).to_have_count(1)
    expect(reply.locator("a")).to_have_attribute("href", "https://example.org/")
    expect(reply.locator("a")).to_have_attribute("rel", "noopener noreferrer nofollow")
    assert page.evaluate("() => window.pwned") is None
    assert page.evaluate(NO_HORIZONTAL_SCROLL)


def test_a_markdown_reply_renders_as_markdown_and_a_script_in_it_as_text(
    live_server: Any, page: Page, user: Any, conversation: Conversation, markdown_vessel: None
) -> None:
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)

    page.get_by_label("Message").fill("- not a list, *mine*")
    page.get_by_role("button", name="Send").click()

    expect_the_markdown_reply(page)
    mine = page.locator(".message.user .content")
    expect(mine).to_have_text("- not a list, *mine*")
    expect(mine.locator("ul, em")).to_have_count(0)
    # The first turn titled the conversation: the heading and the tab say so at once.
    expect(page.locator("h1")).to_have_text("- not a list, *mine*")
    expect(page).to_have_title("- not a list, *mine* · Household")

    page.reload()
    expect_the_markdown_reply(page)
    expect(page.locator(".message.user .content ul")).to_have_count(0)


def test_a_member_renames_then_deletes_a_conversation(
    live_server: Any, page: Page, user: Any, make_conversation: Any
) -> None:
    conversation = make_conversation(title="Old name")
    Message.objects.create(conversation=conversation, role="user", content="hello")
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)

    page.get_by_text("Rename or delete").click()
    page.get_by_label("New title").fill("Garden plans")
    page.get_by_role("button", name="Rename").click()

    expect(page.locator("h1")).to_have_text("Garden plans")
    assert page.evaluate(NO_HORIZONTAL_SCROLL)
    conversation.refresh_from_db()
    assert conversation.title == "Garden plans"

    page.get_by_text("Rename or delete").click()
    page.get_by_role("link", name="Delete this conversation…").click()
    expect(page.locator("h1")).to_have_text("Delete “Garden plans”?")
    page.get_by_role("button", name="Delete this conversation").click()

    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    expect(page.get_by_role("status").first).to_have_text("“Garden plans” is deleted.")
    expect(page.get_by_role("link", name="Garden plans")).to_have_count(0)
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    assert not Message.objects.exists()


def test_the_list_groups_by_day_searches_and_leaves_temporary_chats_out(
    live_server: Any, page: Page, user: Any, make_conversation: Any, make_user: Any
) -> None:
    today = make_conversation(title="Tea plans")
    yesterday = make_conversation(title="Garden")
    Conversation.objects.filter(pk=yesterday.pk).update(
        created_at=timezone.now() - timedelta(days=1)
    )
    Message.objects.filter(conversation=yesterday).delete()
    Message.objects.create(conversation=today, role="assistant", content="Roses need TEA too.")
    make_conversation(title="Secret", temporary=True)
    make_conversation(title="Bob's roses", viewer=make_user("bob"))
    log_in(page, live_server.url, "alice")

    expect(page.locator(".day-group h2")).to_have_text(["Today", "Yesterday"])
    expect(page.locator(".day-group").first.get_by_role("link")).to_have_text(["Tea plans"])
    expect(page.get_by_role("link", name="Secret")).to_have_count(0)
    assert page.evaluate(NO_HORIZONTAL_SCROLL)

    page.get_by_label("Search titles and messages").fill("roses")
    page.get_by_role("button", name="Search").click()

    expect(page.locator(".conversations a")).to_have_text(["Tea plans"])
    page.get_by_label("Search titles and messages").fill("coffee")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_text("No conversation of yours holds “coffee”.")).to_be_visible()


def test_a_temporary_chat_is_marked_as_such_while_open(
    live_server: Any, page: Page, user: Any, make_conversation: Any
) -> None:
    conversation = make_conversation(temporary=True)
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)

    notice = page.locator("#temporary-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Temporary chat — not listed among your conversations")
    expect(notice).to_contain_text("quiet (no message) for 1 day")


def test_enter_sends_and_shift_enter_starts_a_new_line(
    live_server: Any, page: Page, user: Any, conversation: Conversation
) -> None:
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)
    box = page.get_by_label("Message")

    expect(page.get_by_text("Enter sends; Shift+Enter starts a new line.")).to_be_visible()
    box.fill("first line")
    box.press("Shift+Enter")
    box.press_sequentially("second line")
    expect(box).to_have_value("first line\nsecond line")
    assert not Message.objects.exists()

    box.press("Enter")

    expect(page.locator(".message.assistant:not(.writing)")).to_contain_text("second line")
    expect(page.locator(".message.user .content")).to_have_text("first line\nsecond line")
    expect(box).to_have_value("")


def test_a_paste_over_the_limit_is_refused_with_words_and_nothing_is_cut_or_sent(
    live_server: Any, page: Page, user: Any, conversation: Conversation, settings: Any
) -> None:
    settings.WEBUI = {"MAX_MESSAGE_CHARS": 50}
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    box = page.get_by_label("Message")
    count = page.locator("#char-count")
    refusal = "This message has 51 characters; a message may have at most 50."

    box.fill("short")
    expect(count).to_be_hidden()
    box.fill("x" * 45)
    expect(count).to_have_text("45 / 50 characters")
    # No maxlength: the browser would cut a paste at it without a word.
    assert box.get_attribute("maxlength") is None
    box.fill("")
    box.focus()
    page.keyboard.insert_text("x" * 51)  # as a paste arrives: one input of the whole text

    expect(box).to_have_value("x" * 51)
    expect(count).to_have_text("51 / 50 characters")
    expect(page.get_by_role("alert")).to_contain_text(refusal)
    page.get_by_role("button", name="Send").click()
    box.press("Enter")

    expect(page.get_by_role("alert")).to_contain_text(refusal)
    expect(page.get_by_role("alert")).to_contain_text("Nothing was sent.")
    expect(page.get_by_role("button", name="Retry")).to_be_hidden()
    expect(box).to_have_value("x" * 51)
    assert posts == []
    assert not Message.objects.exists()
    if SCREENSHOTS:
        page.screenshot(
            path=os.path.join(SCREENSHOTS, f"over-limit-{page.viewport_size['width']}.png")
        )

    # Shortened to the limit, the sentence goes and the message is sent whole.
    box.press("End")
    box.press("Backspace")
    expect(page.locator("#chat-error")).to_be_hidden()
    box.press("Enter")
    expect(page.locator(".message.user .content")).to_have_text("x" * 50)


def test_the_memory_hint_shows_only_where_the_memory_tool_is_on(
    live_server: Any,
    page: Page,
    user: Any,
    make_conversation: Any,
    offline_vessel: Any,
    memory_settings: Any,
) -> None:
    with_tool = make_conversation()
    temporary = make_conversation(temporary=True)
    log_in(page, live_server.url, "alice")
    hint = "(try “remember I like tea”)"

    open_conversation(page, live_server, with_tool)
    assert hint in page.get_by_label("Message").get_attribute("placeholder")
    open_conversation(page, live_server, temporary)
    assert hint not in page.get_by_label("Message").get_attribute("placeholder")

    offline_vessel.memory_tool_enabled = False
    offline_vessel.save()
    open_conversation(page, live_server, make_conversation())
    assert hint not in page.get_by_label("Message").get_attribute("placeholder")
