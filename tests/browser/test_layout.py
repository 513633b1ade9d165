"""Every page fits a phone's width (390 px) and a desktop's (1280 px), for a member and for staff:
nothing makes the page scroll sideways, the navigation fits, the composer of a long conversation
stays in reach, and the Soul Stream's wake posts lay out like its job posts."""

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from rest_framework.test import APIClient

from pippa_memory.models import MemoryBlock, OutboxEvent
from tests.browser.test_chat_flow import SCREENSHOTS, log_in
from tests.support.household_memory import add_memory
from tests.support.layout import WIDTHS, assert_fits, box_of, inside_viewport, overflow_report
from webui.models import Conversation, Message, ScheduledJob, UnattendedRun, VaultSnapshot, Vessel
from webui.unattended.runner import run_due_jobs, run_wake

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Text with no place to break: a link pasted whole, a hash, a long JSON value.
UNBROKEN = "https://example.org/" + "a-very-long-path-without-spaces/" * 6 + "end"
LONG_PROMPT = f"Write the morning note about {UNBROKEN} for the whole household."


@dataclass
class Household:
    """What the pages show: a member's conversations, a long one, a job's and a wake's posts."""

    member: Any
    root: Any
    memory: str
    chat: Conversation
    staff_chat: Conversation
    long_chat: Conversation
    job_run: UnattendedRun
    wake_run: UnattendedRun


def send(client: APIClient, conversation: Conversation, text: str) -> None:
    answer = client.post(
        f"/api/conversations/{conversation.pk}/messages/", {"text": text}, format="json"
    )
    assert answer.status_code == 201, answer.content


def long_conversation(member: Any, soul: Any, vessel: Vessel) -> Conversation:
    conversation = Conversation.objects.create(
        soul=soul, vessel=vessel, viewer=member, title="A long talk"
    )
    for turn in range(10):
        user = Message.objects.create(
            conversation=conversation,
            role="user",
            content=f"Question {turn}: what about the garden?",
        )
        Message.objects.create(
            conversation=conversation,
            role="assistant",
            content=f"Answer {turn}: water the tomatoes, then the beans.\n" * 3,
            reply_to=user,
        )
    return conversation


@pytest.fixture
def household(make_user: Any, user: Any, soul: Any, offline_vessel: Vessel, memory_on: Any) -> Any:
    root = make_user("root", is_staff=True, is_superuser=True)
    Vessel.objects.create(
        slug="gateway",
        name="Household gateway with a long name",
        adapter=Vessel.Adapter.OPENAI_COMPATIBLE,
        model="meta-llama/Llama-3.3-70B-Instruct-Turbo-FP8-with-a-long-model-name",
        base_url="https://llm-gateway.household.example.org/v1/openai-compatible/chat",
        api_key_env="HOUSEHOLD_GATEWAY_API_KEY",
    )
    memory_on.state.remember("pippa", f"The household wiki lives at {UNBROKEN}.")
    memory = add_memory(memory_on, f"Alice keeps her recipes at {UNBROKEN}", by=user)
    client = APIClient()
    client.force_login(user)
    chat = Conversation.objects.create(
        soul=soul, vessel=offline_vessel, viewer=user, title="Tea and links"
    )
    send(client, chat, "remember I like tea")
    send(client, chat, f"Here is the link: {UNBROKEN}")
    # Staff's own chat, whose words the admin shows them in full.
    client.force_login(root)
    staff_chat = Conversation.objects.create(soul=soul, vessel=offline_vessel, viewer=root)
    send(client, staff_chat, f"remember the wiki is at {UNBROKEN}")
    send(client, staff_chat, "recall wiki")
    ScheduledJob.objects.create(
        name="Morning note",
        soul=soul,
        vessel=offline_vessel,
        prompt=LONG_PROMPT,
        schedule="every 1h",
        next_run_at=timezone.now() - timedelta(seconds=1),
    )
    (job_run,) = run_due_jobs()
    wake_run = run_wake(soul=soul, vessel=offline_vessel)
    return Household(
        member=user,
        root=root,
        memory=memory,
        chat=chat,
        staff_chat=staff_chat,
        long_chat=long_conversation(user, soul, offline_vessel),
        job_run=job_run,
        wake_run=wake_run,
    )


def walk(page: Page, base: str, paths: list[str]) -> list[str]:
    """Open each path; every page that does not fit, with what is at fault."""
    problems = []
    for path in paths:
        answer = page.goto(base + path)
        status = answer.status if answer is not None else None
        assert status == 200, f"{path} answered {status}"
        if SCREENSHOTS:
            name = path.strip("/").replace("/", "_") or "home"
            width = page.viewport_size["width"] if page.viewport_size else 0
            page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}-{width}.png"), full_page=True)
        found = overflow_report(page)
        if found:
            problems.append(f"{path}: " + "; ".join(found))
    return problems


def member_pages(world: Household) -> list[str]:
    return [
        "/",
        "/conversations/new/",
        f"/conversations/{world.chat.pk}/",
        f"/conversations/{world.long_chat.pk}/",
        "/vessels/",
        "/stream/",
        "/memory/",
        f"/memory/items/{world.memory}/forget/?soul=pippa",
    ]


def staff_pages(world: Household) -> list[str]:
    member_chat = world.chat.pk
    own_reply = world.staff_chat.messages.filter(role="assistant").last()
    job_conversation = world.job_run.conversation
    job_reply = job_conversation.messages.get(role="assistant")
    event = OutboxEvent.objects.filter(conversation_id=job_conversation.pk).get()
    block = MemoryBlock.objects.filter(viewer="").first() or MemoryBlock.objects.first()
    snapshot = VaultSnapshot.objects.get()
    return [
        "/vessels/",
        "/stream/",
        "/memory/",
        "/status/",
        "/admin/",
        "/admin/webui/conversation/",
        f"/admin/webui/conversation/{member_chat}/change/",
        f"/admin/webui/conversation/{job_conversation.pk}/change/",
        f"/admin/webui/conversation/{world.staff_chat.pk}/change/",
        f"/admin/webui/message/{own_reply.pk}/change/",
        "/admin/webui/message/",
        f"/admin/webui/message/{job_reply.pk}/change/",
        "/admin/webui/vessel/",
        "/admin/webui/soul/",
        "/admin/webui/scheduledjob/",
        "/admin/auth/user/",
        "/admin/webui/unattendedrun/",
        f"/admin/webui/unattendedrun/{world.job_run.pk}/change/",
        "/admin/webui/vaultsnapshot/",
        f"/admin/webui/vaultsnapshot/{snapshot.pk}/change/",
        "/admin/pippa_memory/conversationpin/",
        f"/admin/pippa_memory/conversationpin/{job_conversation.pk}/change/",
        "/admin/pippa_memory/pinrecord/",
        "/admin/pippa_memory/memoryblock/",
        "/admin/pippa_memory/braincall/",
        f"/admin/pippa_memory/memoryblock/{block.pk}/change/",
        "/admin/pippa_memory/outboxevent/",
        f"/admin/pippa_memory/outboxevent/{event.pk}/change/",
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_members_page_fits_the_window(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{live_server.url}/accounts/login/")
    assert_fits(page, "the login page")
    log_in(page, live_server.url, "alice")

    problems = walk(page, live_server.url, member_pages(household))

    assert problems == [], f"pages wider than {width} px:\n" + "\n".join(problems)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_staff_page_and_the_admins_fit_the_window(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server.url, "root")

    problems = walk(page, live_server.url, staff_pages(household))

    assert problems == [], f"pages wider than {width} px:\n" + "\n".join(problems)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_repin_confirmation_fits_and_shows_where_it_is(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}/admin/pippa_memory/conversationpin/")
    page.locator(f"input[name=_selected_action][value='{household.chat.pk}']").check()
    page.locator("select[name=action]").select_option("repin_at_next_turn")
    page.get_by_role("button", name="Go").click()

    expect(page.get_by_role("heading", name="Re-pin at next turn")).to_be_visible()
    crumbs = page.locator(".breadcrumbs")
    expect(crumbs).to_have_text("Home › Pippa memory › Conversation pins › Re-pin at next turn")
    expect(crumbs.get_by_role("link", name="Conversation pins")).to_have_attribute(
        "href", "/admin/pippa_memory/conversationpin/"
    )
    assert_fits(page, "the re-pin confirmation")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_navigation_fits_with_every_link_visible(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server.url, "root")

    nav = page.get_by_role("navigation", name="Site")
    names = ["Conversations", "New conversation", "Soul Stream", "Vessels", "Memory", "Admin"]
    for name in names:
        link = nav.get_by_role("link", name=name, exact=True)
        expect(link).to_be_visible()
        assert inside_viewport(page, link), f"the {name} link is outside the window"
    logout = nav.get_by_role("button", name="Log out root")
    assert inside_viewport(page, logout)
    header = page.locator("header.site").bounding_box()
    assert header is not None
    assert header["height"] <= 800 * 0.3, f"the header takes {header['height']} px of 800"
    assert_fits(page, "the navigation")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_composer_stays_in_reach_in_a_long_conversation(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 700})
    log_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/conversations/{household.long_chat.pk}/")
    expect(page.locator(".message")).to_have_count(20)
    box = page.get_by_label("Message")
    send_button = page.get_by_role("button", name="Send")

    # Reading from the top, and from the middle, the box and its Send button are on the screen.
    for where in ("0", "document.documentElement.scrollHeight / 2"):
        page.evaluate(f"window.scrollTo(0, {where})")
        assert inside_viewport(page, box), f"the message box is off screen at scroll {where}"
        assert inside_viewport(page, send_button), f"Send is off screen at scroll {where}"

    # At the end, the last reply is above the composer, not under it.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    last, composer = box_of(page.locator(".message").last), box_of(page.locator("form.send"))
    assert last["y"] + last["height"] <= composer["y"] + 0.5, "the composer covers the last reply"

    # A new reply is scrolled into view above the composer too.
    box.fill("one more question")
    send_button.click()
    reply = page.locator(".message.assistant").last
    expect(reply).to_contain_text("I heard: “one more question”")
    expect(send_button).to_be_enabled()
    reply_box, composer = box_of(reply), box_of(page.locator("form.send"))
    assert reply_box["y"] + reply_box["height"] <= composer["y"] + 0.5, "the reply is hidden"
    assert_fits(page, "the long conversation")


@pytest.mark.parametrize("width", WIDTHS)
def test_wake_posts_lay_out_like_job_posts(
    live_server: Any, page: Page, household: Household, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server.url, "root")
    page.goto(f"{live_server.url}/stream/")

    # Found by what they say, not by class or id, so the test reads any version of the page.
    every_post = page.locator("li.post")
    posts = {
        "job": every_post.filter(has_text="Morning note"),
        "wake": every_post.filter(has_not_text="Morning note"),
    }
    layout = {}
    for kind, post in posts.items():
        expect(post).to_be_visible()
        post_box, text_box = box_of(post), box_of(post.locator(".message"))
        layout[kind] = {
            "display": post.evaluate("el => getComputedStyle(el).display"),
            "width": round(post_box["width"]),
            "text width": round(text_box["width"]),
        }
        # The heading line, then the text, then what memory it carried: one under the other.
        parts = (":scope > p >> nth=0", ".message", ".memory")
        head, text, memory = (box_of(post.locator(part)) for part in parts)
        stacked = head["y"] + head["height"] <= text["y"] + 0.5
        stacked = stacked and text["y"] + text["height"] <= memory["y"] + 0.5
        assert stacked, f"the {kind} post's heading, text and memory line are not one under another"
    assert layout["wake"] == layout["job"]
    assert_fits(page, "the Soul Stream")
