"""Each provider's published prompt-cache prices, the one table the cache bill is estimated from.

:data:`PUBLISHED_CACHE_PRICES` is the default of the ``CACHE_PRICES`` setting
(:mod:`webui.conf`): per adapter, the page the prices were read from and when, and a row per
model family, keyed by the start of the model id. The longest key a vessel's model starts with
wins; the key ``""`` is the adapter's row for any other model (an estimate, and the page says so).
Prices are US dollars per million tokens: ``input`` (a token sent and not read from the cache),
``cache_read`` (a token read from the cache) and ``cache_write`` (a token written to it; where the
provider charges nothing extra, as OpenAI and Gemini's implicit caching, it equals ``input``).
``min_cacheable_tokens`` is the shortest prompt the provider caches at all: below it nothing is
cached, so such a prompt is not counted as cacheable.

Read on 2026-12-03 from the pages named in ``source`` (``docs/configuration.md`` says the same).
Local servers and the offline vessel cost nothing.
"""

from dataclasses import dataclass
from typing import Any


def _row(input: float, cache_read: float, cache_write: float, minimum: int) -> dict[str, Any]:
    return {
        "input": input,
        "cache_read": cache_read,
        "cache_write": cache_write,
        "min_cacheable_tokens": minimum,
    }


_ANTHROPIC = {
    "source": "https://platform.claude.com/docs/en/about-claude/pricing and "
    "https://platform.claude.com/docs/en/build-with-claude/prompt-caching (5-minute cache writes)",
    "read_on": "2026-12-03",
    "models": {
        "claude-opus-5": _row(5.0, 0.50, 6.25, 512),
        "claude-opus-4-8": _row(5.0, 0.50, 6.25, 1024),
        "claude-opus-4-7": _row(5.0, 0.50, 6.25, 2048),
        "claude-opus-4-6": _row(5.0, 0.50, 6.25, 4096),
        "claude-opus-4-5": _row(5.0, 0.50, 6.25, 4096),
        "claude-opus-4": _row(15.0, 1.50, 18.75, 1024),  # Opus 4 and 4.1
        "claude-sonnet-5": _row(2.0, 0.20, 2.50, 1024),
        "claude-sonnet-4": _row(3.0, 0.30, 3.75, 1024),  # Sonnet 4, 4.5, 4.6
        "claude-3-7-sonnet": _row(3.0, 0.30, 3.75, 1024),
        "claude-haiku-4-5": _row(1.0, 0.10, 1.25, 4096),
        "claude-3-5-haiku": _row(0.80, 0.08, 1.0, 2048),
        "claude-3-haiku": _row(0.25, 0.03, 0.30, 2048),
        "": _row(3.0, 0.30, 3.75, 1024),  # any other model: Sonnet's prices
    },
}

_OPENAI = {
    "source": "https://developers.openai.com/api/docs/pricing and "
    "https://developers.openai.com/api/docs/guides/prompt-caching (caching from 1024 tokens, "
    "no charge for writes)",
    "read_on": "2026-12-03",
    "models": {
        "gpt-5.2": _row(1.75, 0.175, 1.75, 1024),
        "gpt-5-mini": _row(0.25, 0.025, 0.25, 1024),
        "gpt-5": _row(1.25, 0.125, 1.25, 1024),
        "gpt-4.1": _row(2.0, 0.50, 2.0, 1024),
        "gpt-4o-mini": _row(0.15, 0.075, 0.15, 1024),
        "gpt-4o": _row(2.50, 1.25, 2.50, 1024),
        "": _row(1.25, 0.125, 1.25, 1024),  # any other model: GPT-5's prices
    },
}

_GEMINI = {
    "source": "https://ai.google.dev/gemini-api/docs/pricing and "
    "https://ai.google.dev/gemini-api/docs/caching (implicit caching, no charge for writes)",
    "read_on": "2026-12-03",
    "models": {
        "gemini-2.5-flash-lite": _row(0.10, 0.01, 0.10, 2048),
        "gemini-2.5-flash": _row(0.30, 0.03, 0.30, 2048),
        "gemini-2.5-pro": _row(1.25, 0.125, 1.25, 2048),
        "": _row(0.30, 0.03, 0.30, 4096),  # any other model: Flash prices, 3.x minimum
    },
}


def _free(what: str) -> dict[str, Any]:
    return {"source": what, "read_on": "", "models": {"": _row(0.0, 0.0, 0.0, 0)}}


#: The default of ``WEBUI["CACHE_PRICES"]``: per adapter, ``source``, ``read_on`` and ``models``.
PUBLISHED_CACHE_PRICES: dict[str, dict[str, Any]] = {
    "anthropic": _ANTHROPIC,
    "openai": _OPENAI,
    "openai_responses": _OPENAI,
    "gemini": _GEMINI,
    "ollama": _free("A local server: no charge."),
    "openai_compatible": _free("A local server (llama.cpp, vLLM, LM Studio): no charge."),
    "offline": _free("The offline vessel: no charge."),
}

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
        from webui.conf import webui_settings

        table = webui_settings.CACHE_PRICES
    models = (table.get(adapter) or {}).get("models") or {"": _row(0.0, 0.0, 0.0, 0)}
    family = max((key for key in models if (model or "").startswith(key)), key=len, default="")
    row = models.get(family) or _row(0.0, 0.0, 0.0, 0)
    return CachePrice(
        adapter=adapter,
        family=family,
        input=float(row["input"]),
        cache_read=float(row["cache_read"]),
        cache_write=float(row["cache_write"]),
        min_cacheable_tokens=int(row["min_cacheable_tokens"]),
        estimated=family == "" and len(models) > 1,
    )
