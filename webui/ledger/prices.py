"""How a model's prompt-cache prices are found in the ``CACHE_PRICES`` table, and what is wrong with one.

The table's default, each provider's published prices with their source and the day they were
read, is :data:`webui.published_prices.PUBLISHED_CACHE_PRICES`; ``WEBUI_CACHE_PRICES``
replaces the adapters it names (:mod:`webui.conf`).
"""

from dataclasses import dataclass
from typing import Any

from webui.conf import webui_settings
from webui.published_prices import price_row

FREE_ROW = price_row(0.0, 0.0, 0.0, 0)

PRICE_FIELDS = ("input", "cache_read", "cache_write", "min_cacheable_tokens")


@dataclass(frozen=True)
class CachePrice:
    """One model family's prices in dollars per million tokens, and its shortest cacheable prompt.

    ``family`` is the key that matched; ``estimated`` says the model is none the table names,
    so the adapter's row for any other model (a neighbour's prices) stood in.
    """

    adapter: str
    family: str
    input: float
    cache_read: float
    cache_write: float
    min_cacheable_tokens: int
    estimated: bool = False


def price_table_problems(table: Any) -> list[str]:
    """What is wrong with a ``CACHE_PRICES`` table, in plain words (empty: nothing)."""
    if not isinstance(table, dict):
        return ["CACHE_PRICES must be a mapping of adapter names to their prices."]
    problems = []
    for adapter, entry in table.items():
        models = entry.get("models") if isinstance(entry, dict) else None
        if not isinstance(models, dict) or "" not in models:
            problems.append(f"CACHE_PRICES[{adapter!r}] needs 'models' with a '' row.")
            continue
        for family, row in models.items():
            if not isinstance(row, dict):
                problems.append(f"CACHE_PRICES[{adapter!r}] {family!r} is not a mapping.")
                continue
            for name in PRICE_FIELDS:
                value = row.get(name)
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    problems.append(
                        f"CACHE_PRICES[{adapter!r}] {family!r} needs {name} as a number >= 0, "
                        f"not {value!r}."
                    )
    return problems


def cache_price(*, adapter: str, model: str, table: dict[str, Any] | None = None) -> CachePrice:
    """The prices for ``model`` on ``adapter``: the row whose key is the longest start of the
    model id, else the adapter's ``""`` row; an adapter the table does not name costs nothing."""
    if table is None:
        table = webui_settings.CACHE_PRICES
    models = (table.get(adapter) or {}).get("models") or {"": FREE_ROW}
    family = max((key for key in models if (model or "").startswith(key)), key=len, default="")
    row = models.get(family) or FREE_ROW
    return CachePrice(
        adapter=adapter,
        family=family,
        input=float(row["input"]),
        cache_read=float(row["cache_read"]),
        cache_write=float(row["cache_write"]),
        min_cacheable_tokens=int(row["min_cacheable_tokens"]),
        estimated=family == "" and len(models) > 1,
    )
