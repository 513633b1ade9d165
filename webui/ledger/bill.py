"""What the prompt cache saved or lost, from token counts and one model family's prices.

The figures are estimates from the provider-reported usage on the ledger and the published prices
in :mod:`webui.ledger.prices`: what the calls cost as the provider counted them (uncached input,
cache reads, cache writes), against what the same calls would have cost with no cache at all.
A positive difference is saved; a negative one is lost (Anthropic charges a cache write above
the input price, so a prefix written and never read again costs more than no cache).

Only calls whose prompt reaches the provider's minimum cacheable length count as *cacheable*:
a shorter prompt is never cached (Anthropic silently caches nothing below it), so it is left out
of the share of cacheable input read from the cache instead of showing as a miss.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from webui.ledger.prices import CachePrice

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class CacheBill:
    """Token counts of a set of vessel calls and their estimated cost, in dollars."""

    calls: int
    input_tokens: int
    cacheable_input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    uncached_cost: float
    estimated_prices: bool = False

    @property
    def saved(self) -> float:
        """Dollars saved by the cache (negative: lost), against the same calls with no cache."""
        return self.uncached_cost - self.cost

    @property
    def cached_share(self) -> float | None:
        """The share of cacheable input read from the cache; ``None`` when nothing was cacheable."""
        if not self.cacheable_input_tokens:
            return None
        return min(1.0, self.cache_read_tokens / self.cacheable_input_tokens)

    @property
    def input_share(self) -> float | None:
        """The share of all input read from the cache; ``None`` with no input."""
        if not self.input_tokens:
            return None
        return self.cache_read_tokens / self.input_tokens


def bill(
    price: CachePrice,
    *,
    calls: int,
    input_tokens: int,
    cache_read_tokens: int,
    cache_write_tokens: int,
    cacheable_input_tokens: int,
) -> CacheBill:
    """The bill of ``calls`` vessel calls on one model family.

    ``input_tokens`` is the whole prompt of every call, cache reads and writes included;
    ``cacheable_input_tokens`` the input of the calls whose prompt reached
    ``price.min_cacheable_tokens``.
    """
    uncached = max(0, input_tokens - cache_read_tokens - cache_write_tokens)
    cost = (
        uncached * price.input
        + cache_read_tokens * price.cache_read
        + cache_write_tokens * price.cache_write
    ) / PER_MILLION
    return CacheBill(
        calls=calls,
        input_tokens=input_tokens,
        cacheable_input_tokens=cacheable_input_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        cost=cost,
        uncached_cost=input_tokens * price.input / PER_MILLION,
        estimated_prices=price.estimated,
    )


def call_bill(
    price: CachePrice, *, input_tokens: int, cache_read_tokens: int, cache_write_tokens: int
) -> CacheBill:
    """The bill of one vessel call: cacheable only if its prompt reaches the minimum length."""
    cacheable = input_tokens if input_tokens >= price.min_cacheable_tokens else 0
    return bill(
        price,
        calls=1,
        input_tokens=input_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        cacheable_input_tokens=cacheable,
    )


def combined(bills: Iterable[CacheBill]) -> CacheBill:
    """The sum of ``bills`` (on any model families); estimated if any part was."""
    parts = list(bills)
    return CacheBill(
        calls=sum(b.calls for b in parts),
        input_tokens=sum(b.input_tokens for b in parts),
        cacheable_input_tokens=sum(b.cacheable_input_tokens for b in parts),
        cache_read_tokens=sum(b.cache_read_tokens for b in parts),
        cache_write_tokens=sum(b.cache_write_tokens for b in parts),
        cost=sum(b.cost for b in parts),
        uncached_cost=sum(b.uncached_cost for b in parts),
        estimated_prices=any(b.estimated_prices for b in parts),
    )
