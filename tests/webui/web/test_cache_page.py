"""The cache bill page and the ledger in the admin: shares computed from the ledger's rows,
costs from the price table with short Anthropic prompts never counted as cacheable, drift shown
with its cause, for staff who may view the ledger only, and no prompt text anywhere: a
conversation is labelled by soul, vessel and date, never by its title (the member's words)."""

from typing import Any

import pytest
from django.test import Client

from tests.support.clients import client_as, granted
from webui.ledger.report import bill_by_conversation, bill_by_vessel, turn_shares
from webui.models import Conversation, Message, Vessel, VesselCall
from webui.published_prices import PUBLISHED_CACHE_PRICES

pytestmark = pytest.mark.django_db

SECRET = "the-words-nobody-else-may-read"


@pytest.fixture
def sonnet(db: None) -> Vessel:
    return Vessel.objects.create(
        slug="sonnet", name="Sonnet", adapter="anthropic", model="claude-sonnet-4-6"
    )


@pytest.fixture
def ledger(make_conversation: Any, sonnet: Vessel) -> Any:
    """Three turns of one Anthropic conversation: a first turn that writes the cache, a turn
    that reads it, and a re-pinned turn that drifted; then a turn below the minimum length."""

    def call(conversation: Conversation, *, tokens: int, read: int, write: int, **extra: Any):
        message = Message.objects.create(conversation=conversation, role="user", content=SECRET)
        return VesselCall.objects.create(
            conversation=conversation,
            user_message=message,
            round=0,
            vessel=sonnet,
            adapter="anthropic",
            model=sonnet.model,
            input_tokens=tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
            prefix_bytes=tokens * 4,
            sections={"vault": "a" * 64},
            **extra,
        )

    long_chat = make_conversation(vessel=sonnet, title="Weekend plans")
    call(long_chat, tokens=2000, read=0, write=2000)
    call(long_chat, tokens=2200, read=2000, write=200)
    call(
        long_chat,
        tokens=2400,
        read=0,
        write=2400,
        drift_section="memory",
        drift_cause="staff re-pin: a forgotten memory",
    )
    short_chat = make_conversation(vessel=sonnet, title="Quick question")
    call(short_chat, tokens=900, read=0, write=0)
    return {"long": long_chat, "short": short_chat}


def staff_client(make_user: Any, *codenames: str) -> Client:
    return client_as(granted(make_user("keeper", is_staff=True), *codenames))


def test_the_vessel_share_counts_only_prompts_that_reach_the_anthropic_minimum(
    ledger: Any, sonnet: Vessel
) -> None:
    (row,) = bill_by_vessel()

    assert row.label == "Sonnet"
    assert row.bill.calls == 4
    assert row.bill.input_tokens == 2000 + 2200 + 2400 + 900
    # The 900-token prompt is below Sonnet's 1024: not cacheable, so not a miss.
    assert row.bill.cacheable_input_tokens == 2000 + 2200 + 2400
    assert row.bill.cached_share == pytest.approx(2000 / 6600)
    assert row.drift_turns == 1


def test_the_estimated_saving_uses_the_price_table(ledger: Any) -> None:
    (row,) = bill_by_vessel()

    input_price, read_price, write_price = 3.0, 0.30, 3.75  # Sonnet 4.x, $ per million
    cost = (2000 * read_price + (2000 + 200 + 2400) * write_price + 900 * input_price) / 1e6
    uncached = 7500 * input_price / 1e6
    assert row.bill.cost == pytest.approx(cost)
    assert row.bill.saved == pytest.approx(uncached - cost)


def test_the_price_table_in_settings_is_what_the_bill_reads(ledger: Any, settings: Any) -> None:
    anthropic = PUBLISHED_CACHE_PRICES["anthropic"]
    sonnet = {**anthropic["models"]["claude-sonnet-4"], "input": 10.0}
    models = {**anthropic["models"], "claude-sonnet-4": sonnet}
    table = {**PUBLISHED_CACHE_PRICES, "anthropic": {**anthropic, "models": models}}
    settings.WEBUI = {**settings.WEBUI, "CACHE_PRICES": table}

    (row,) = bill_by_vessel()

    assert row.bill.uncached_cost == pytest.approx(7500 * 10.0 / 1e6)


def test_each_conversation_has_its_own_share_and_drift(ledger: Any) -> None:
    rows = {row.key: row for row in bill_by_conversation()}

    long_chat, short_chat = rows[ledger["long"].id], rows[ledger["short"].id]
    assert long_chat.label == str(ledger["long"])
    assert long_chat.label.startswith("Pippa via Sonnet (")
    assert "Weekend plans" not in long_chat.label
    assert long_chat.bill.cached_share == pytest.approx(2000 / 6600)
    assert long_chat.drift_turns == 1
    assert short_chat.bill.cached_share is None
    assert short_chat.bill.saved == pytest.approx(0.0)


def test_the_turn_chart_reads_one_share_per_turn_and_marks_drift(ledger: Any) -> None:
    shares = turn_shares(ledger["long"])

    assert [turn.number for turn in shares] == [1, 2, 3]
    assert [turn.share for turn in shares] == [0.0, pytest.approx(2000 / 2200), 0.0]
    assert [turn.drifted for turn in shares] == [False, False, True]
    assert turn_shares(ledger["short"])[0].share is None


def test_staff_who_may_view_the_ledger_see_shares_drift_cause_and_prices(
    ledger: Any, make_user: Any
) -> None:
    client = staff_client(make_user, "view_vesselcall", "view_conversation")

    page = client.get("/cache/")

    assert page.status_code == 200
    text = page.content.decode()
    assert "30.3%" in text  # 2000 of 6600 cacheable tokens
    assert "staff re-pin: a forgotten memory" in text
    assert "Pippa via Sonnet (" in text
    assert "Weekend plans" not in text
    assert "Quick question" not in text
    assert "platform.claude.com" in text
    assert "read on 2026-12-03" in text
    assert SECRET not in text


def test_without_the_conversation_view_permission_labels_give_way_to_ids(
    ledger: Any, make_user: Any
) -> None:
    client = staff_client(make_user, "view_vesselcall")

    text = client.get("/cache/").content.decode()

    assert "Pippa via Sonnet (" not in text
    assert str(ledger["long"].id) in text


@pytest.mark.parametrize("who", ["member", "staff without the ledger's permission"])
def test_the_page_refuses_members_and_staff_without_permission(
    ledger: Any, make_user: Any, who: str
) -> None:
    user = make_user("someone", is_staff=who != "member")
    client = Client()
    client.force_login(user)

    assert client.get("/cache/").status_code == 403


def test_anonymous_visitors_are_sent_to_the_login_page(ledger: Any) -> None:
    response = Client().get("/cache/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_cache_link_is_shown_only_to_those_the_page_lets_in(make_user: Any) -> None:
    member = Client()
    member.force_login(make_user("member"))
    keeper = staff_client(make_user, "view_vesselcall")

    assert 'href="/cache/"' not in member.get("/").content.decode()
    assert 'href="/cache/"' in keeper.get("/").content.decode()


def test_the_conversation_admin_page_charts_cached_share_without_text(
    ledger: Any, make_user: Any
) -> None:
    root = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)

    page = client.get(f"/admin/webui/conversation/{ledger['long'].id}/change/")

    text = page.content.decode()
    assert page.status_code == 200
    assert text.count("<rect ") == 3
    assert "Turn 2: 91% of its cacheable input read from the cache" in text
    assert "Turn 3: 0% of its cacheable input read from the cache (drift)" in text
    assert SECRET not in text


def test_the_ledger_admin_is_read_only(ledger: Any, make_user: Any) -> None:
    root = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    call = VesselCall.objects.order_by("id").first()

    assert client.get("/admin/webui/vesselcall/").status_code == 200
    assert client.get("/admin/webui/vesselcall/add/").status_code == 403
    assert (
        client.post(f"/admin/webui/vesselcall/{call.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    change = client.post(f"/admin/webui/vesselcall/{call.pk}/change/", {"input_tokens": 1})
    assert change.status_code == 403
    call.refresh_from_db()
    assert call.input_tokens == 2000
