"""The cache bill: one table of published prices (settings, documented with source and date),
each model matched to its family, costs estimated from provider-reported usage, and a prompt below
the provider's minimum cacheable length never counted as cacheable."""

import re
from pathlib import Path

import environ
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from webui.checks import check_cache_prices
from webui.conf import from_environment
from webui.ledger.bill import bill, call_bill, combined
from webui.ledger.prices import cache_price, price_table_problems
from webui.published_prices import PUBLISHED_CACHE_PRICES

CONFIGURATION = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


@pytest.mark.parametrize(
    ("model", "family", "minimum"),
    [
        ("claude-sonnet-4-6", "claude-sonnet-4", 1024),
        ("claude-opus-4-20250514", "claude-opus-4", 1024),
        ("claude-opus-4-6", "claude-opus-4-6", 4096),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5", 4096),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku", 2048),
    ],
)
def test_an_anthropic_model_gets_its_familys_minimum_cacheable_length(
    model: str, family: str, minimum: int
) -> None:
    price = cache_price(adapter="anthropic", model=model)

    assert (price.family, price.min_cacheable_tokens) == (family, minimum)
    assert not price.estimated


def test_the_longest_family_wins_and_an_unknown_model_is_marked_estimated() -> None:
    assert cache_price(adapter="openai", model="gpt-5-mini").input == 0.25
    assert cache_price(adapter="openai", model="gpt-5-2026-04-01").input == 1.25
    unknown = cache_price(adapter="anthropic", model="claude-next")
    assert unknown.family == ""
    assert unknown.estimated


def test_local_vessels_cost_nothing_and_are_not_estimates() -> None:
    for adapter in ("ollama", "openai_compatible", "offline"):
        price = cache_price(adapter=adapter, model="llama3.2")
        assert (price.input, price.cache_read, price.cache_write) == (0.0, 0.0, 0.0)
        assert not price.estimated


def test_the_bill_prices_reads_writes_and_the_rest_and_says_what_was_saved() -> None:
    sonnet = cache_price(adapter="anthropic", model="claude-sonnet-4-6")

    result = bill(
        sonnet,
        calls=2,
        input_tokens=10_000,
        cache_read_tokens=6_000,
        cache_write_tokens=3_000,
        cacheable_input_tokens=10_000,
    )

    # 1000 uncached at $3, 6000 read at $0.30, 3000 written at $3.75 per million.
    assert result.cost == pytest.approx((1000 * 3 + 6000 * 0.30 + 3000 * 3.75) / 1e6)
    assert result.uncached_cost == pytest.approx(10_000 * 3 / 1e6)
    assert result.saved == pytest.approx(result.uncached_cost - result.cost)
    assert result.cached_share == pytest.approx(0.6)


def test_a_prefix_written_and_never_read_is_a_loss_on_anthropic() -> None:
    sonnet = cache_price(adapter="anthropic", model="claude-sonnet-4-6")

    result = call_bill(sonnet, input_tokens=2000, cache_read_tokens=0, cache_write_tokens=2000)

    assert result.saved == pytest.approx(-2000 * (3.75 - 3) / 1e6)


def test_a_prompt_below_the_anthropic_minimum_is_not_counted_as_cacheable() -> None:
    haiku = cache_price(adapter="anthropic", model="claude-3-5-haiku-20241022")

    short = call_bill(haiku, input_tokens=2047, cache_read_tokens=0, cache_write_tokens=0)
    long = call_bill(haiku, input_tokens=2048, cache_read_tokens=0, cache_write_tokens=0)
    both = combined([short, long])

    assert short.cacheable_input_tokens == 0
    assert short.cached_share is None
    assert long.cacheable_input_tokens == 2048
    assert long.cached_share == 0.0
    assert both.cacheable_input_tokens == 2048
    assert both.input_tokens == 4095


def test_a_combined_bill_adds_its_parts_and_is_estimated_if_any_part_is() -> None:
    known = call_bill(
        cache_price(adapter="openai", model="gpt-4o"),
        input_tokens=2000,
        cache_read_tokens=1024,
        cache_write_tokens=0,
    )
    guessed = call_bill(
        cache_price(adapter="openai", model="o9"),
        input_tokens=1500,
        cache_read_tokens=0,
        cache_write_tokens=0,
    )

    total = combined([known, guessed])

    assert (total.calls, total.input_tokens, total.cache_read_tokens) == (2, 3500, 1024)
    assert total.cost == pytest.approx(known.cost + guessed.cost)
    assert total.estimated_prices
    assert not known.estimated_prices


def test_configuration_md_lists_every_price_and_minimum_of_the_table() -> None:
    rows = re.findall(
        r"^\| ((?:`\w+`(?:, )?)+) \| `([^`]*)` \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$",
        CONFIGURATION.read_text(),
        re.M,
    )
    documented = {}
    for adapters, family, *numbers in rows:
        for adapter in re.findall(r"`(\w+)`", adapters):
            documented[(adapter, family)] = tuple(float(n) for n in numbers)

    table = {
        (adapter, family): tuple(float(row[k]) for k in row)
        for adapter, entry in PUBLISHED_CACHE_PRICES.items()
        for family, row in entry["models"].items()
    }
    assert documented == table
    for entry in PUBLISHED_CACHE_PRICES.values():
        assert entry["source"]
        if any(row["input"] for row in entry["models"].values()):
            assert entry["read_on"] == "2026-12-03"
            assert "read on 2026-12-03" in CONFIGURATION.read_text()


def test_the_environment_replaces_the_adapters_it_names_and_keeps_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = '{"models": {"": {"input": 0.5, "cache_read": 0.05, "cache_write": 0.5, '
    proxy += '"min_cacheable_tokens": 1024}}}'
    monkeypatch.setenv("WEBUI_CACHE_PRICES", '{"openai_compatible": ' + proxy + "}")

    table = from_environment(environ.Env())["CACHE_PRICES"]

    assert table["openai_compatible"]["models"][""]["input"] == 0.5
    assert table["anthropic"] == PUBLISHED_CACHE_PRICES["anthropic"]


def test_a_price_table_that_is_not_json_stops_the_start_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBUI_CACHE_PRICES", "{openai: cheap}")

    with pytest.raises(ImproperlyConfigured, match="WEBUI_CACHE_PRICES must be JSON"):
        from_environment(environ.Env())


def test_the_published_table_passes_the_check() -> None:
    assert price_table_problems(PUBLISHED_CACHE_PRICES) == []
    assert check_cache_prices() == []


@override_settings(
    WEBUI={
        "CACHE_PRICES": {
            "anthropic": {"models": {"claude": {"input": 3}}},
            "gemini": {
                "models": {
                    "": {"input": -1, "cache_read": 0, "cache_write": 0, "min_cacheable_tokens": 0}
                }
            },
        }
    }
)
def test_a_broken_price_table_is_reported_by_the_check_with_what_is_wrong() -> None:
    errors = check_cache_prices()

    assert {error.id for error in errors} == {"webui.E002"}
    messages = " ".join(error.msg for error in errors)
    assert "CACHE_PRICES['anthropic'] needs 'models' with a '' row" in messages
    assert "CACHE_PRICES['gemini'] '' needs input as a number >= 0, not -1" in messages
