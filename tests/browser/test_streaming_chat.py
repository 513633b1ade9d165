"""The chat page reads the reply as server-sent events, in a real browser against a live server:
the text shows before the reply is complete, Stop keeps the partial reply (shown as stopped), a
second tab posting while a reply is written is told to wait (without Retry), Retry answers the
message that failed, Ctrl+Enter while a reply is written sends nothing, and a connection that
breaks after the last event shows no error."""

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_pages import LONG, begin_a_long_reply, log_in
from tests.support.fakes import FailingAdapter
from webui.models import Conversation, Message
from webui.vessels import registry

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FULL_REPLY = f"(offline) I heard: “{LONG}”"
WAIT_MESSAGE = "A reply is still being written in this conversation; wait for it, then send again."


OFFLINE = registry.ADAPTER_CLASSES["offline"]
# Every event stream the page reads ends in a network error after its last byte, as a connection
# cut just after the server's final event would.
BREAK_THE_STREAM_AT_ITS_END = """(() => {
  const realFetch = window.fetch;
  window.fetch = async function (...args) {
    const response = await realFetch(...args);
    if (!(response.headers.get("Content-Type") || "").startsWith("text/event-stream")) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (!done) return controller.enqueue(value);
        window.streamBroken = true;
        controller.error(new TypeError("network error"));
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
})();"""


def open_conversation(page: Page, live_server: Any, conversation: Conversation) -> None:
    page.goto(f"{live_server.url}{conversation.get_absolute_url()}")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


@pytest.fixture
def open_chat(live_server: Any, page: Page, user: Any, conversation: Conversation) -> Conversation:
    """Alice's conversation, open on her ``page``."""
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)
    return conversation


def send(page: Page, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_role("button", name="Send").click()


def test_the_reply_text_shows_before_the_reply_is_complete(
    page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    first_seen = begin_a_long_reply(page)

    assert FULL_REPLY.startswith(first_seen)
    assert len(first_seen) < len(FULL_REPLY)
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    reply = page.locator(".message.assistant:not(.writing)")
    expect(reply.locator(".content")).to_have_text(FULL_REPLY)
    expect(page.locator(".message.user")).to_have_count(1)
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    assert Message.objects.get(role="assistant").content == FULL_REPLY


def test_stop_ends_the_reply_and_keeps_the_partial_text(
    page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    begin_a_long_reply(page)
    page.get_by_role("button", name="Stop").click()

    reply = page.locator(".message.assistant:not(.writing)")
    expect(reply).to_be_visible()
    # The reply shows as Markdown (one paragraph here): its text is the saved text, whose spaces
    # at the ends a paragraph does not show.
    shown = reply.locator(".content").text_content().strip()
    saved = Message.objects.get(role="assistant").content
    assert shown
    assert FULL_REPLY.startswith(saved)
    assert len(saved) < len(FULL_REPLY)
    assert saved.strip() == shown
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


def test_a_stopped_reply_is_shown_as_stopped_and_stays_so_after_a_reload(
    page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    begin_a_long_reply(page)
    page.get_by_role("button", name="Stop").click()

    expect(page.locator(".message.assistant.stopped .who")).to_contain_text("stopped")
    assert Message.objects.get(role="assistant").stopped is True
    page.reload()
    expect(page.locator(".message.assistant.stopped .who")).to_contain_text("stopped")


def test_a_second_tab_sending_while_a_reply_is_written_is_told_to_wait(
    live_server: Any, page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    second_tab = page.context.new_page()
    open_conversation(second_tab, live_server, open_chat)

    begin_a_long_reply(page)
    send(second_tab, "are you there?")

    expect(second_tab.get_by_role("alert")).to_contain_text(WAIT_MESSAGE)
    expect(second_tab.get_by_role("button", name="Retry")).to_be_hidden()
    expect(second_tab.get_by_label("Message")).to_have_value("are you there?")
    expect(second_tab.locator(".message")).to_have_count(0)
    expect(page.locator(".message.assistant:not(.writing)")).to_contain_text(FULL_REPLY)
    assert not Message.objects.filter(content="are you there?").exists()


def test_retry_answers_the_message_that_failed_not_a_newer_unanswered_one(
    page: Page, open_chat: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", FailingAdapter)

    send(page, "first question")
    expect(page.get_by_role("alert")).to_contain_text("is busy right now")
    failed = Message.objects.get(content="first question")
    # Another tab's message fails too, after this one: the newest unanswered message.
    newer = Message.objects.create(conversation=open_chat, role="user", content="later")
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", OFFLINE)
    with page.expect_request("**/retry/") as retry:
        page.get_by_role("button", name="Retry").click()

    assert retry.value.post_data_json == {"message": str(failed.pk)}
    # The reply is saved once it is no longer being written.
    expect(page.locator(".message.assistant:not(.writing)")).to_contain_text("first question")
    assert Message.objects.get(role="assistant").reply_to == failed
    assert not Message.objects.filter(reply_to=newer).exists()


def test_ctrl_enter_while_a_reply_is_written_sends_nothing_more(
    page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    posts: list[str] = []
    page.on(
        "request", lambda request: posts.append(request.url) if request.method == "POST" else None
    )

    begin_a_long_reply(page)
    page.get_by_label("Message").fill("and another thing")
    page.get_by_label("Message").press("Control+Enter")

    expect(page.locator(".message.assistant:not(.writing)")).to_contain_text(FULL_REPLY)
    assert len(posts) == 1
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    assert not Message.objects.filter(content="and another thing").exists()


def test_a_connection_that_breaks_after_the_reply_arrived_shows_no_error(
    live_server: Any, page: Page, user: Any, conversation: Conversation
) -> None:
    page.add_init_script(BREAK_THE_STREAM_AT_ITS_END)
    log_in(page, live_server.url, "alice")
    open_conversation(page, live_server, conversation)

    send(page, "hello")

    expect(page.locator(".message.assistant")).to_contain_text("I heard: “hello”")
    page.wait_for_function("() => window.streamBroken === true")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    expect(page.locator("#chat-error")).to_be_hidden()
    expect(page.get_by_label("Message")).to_have_value("")


def test_what_is_typed_while_a_reply_is_written_stays_in_the_box(
    page: Page, open_chat: Conversation, slow_offline_vessel: None
) -> None:
    begin_a_long_reply(page)
    page.get_by_label("Message").fill("my next question")
    expect(page.locator(".message.assistant:not(.writing)")).to_have_count(1)

    expect(page.get_by_label("Message")).to_have_value("my next question")
