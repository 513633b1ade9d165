"""Each provider's published prompt-cache prices: data only, so the settings can name it as a default.

:data:`PUBLISHED_CACHE_PRICES` is the default of the ``CACHE_PRICES`` setting
(:mod:`webui.conf`): per adapter, the page the prices were read from and when, and a row per
model family, keyed by the start of the model id. The longest key a vessel's model starts with
wins; the key ``""`` is the adapter's row for any other model (an estimate, and the page says so).
Prices are US dollars per million tokens: ``input`` (a token sent and not read from the cache),
``cache_read`` (a token read from the cache) and ``cache_write`` (a token written to it; where the
provider charges nothing extra, as OpenAI and Gemini's implicit caching, it equals ``input``).
``min_cacheable_tokens`` is the shortest prompt the provider caches at all: below it nothing is
cached, so such a prompt is not counted as cacheable. How a price is looked up and checked:
:mod:`webui.ledger.prices`.

Read on 2026-12-03 from the pages named in ``source`` (``docs/configuration.md`` says the same).
Local servers and the offline vessel cost nothing.
"""

from typing import Any


def price_row(input: float, cache_read: float, cache_write: float, minimum: int) -> dict[str, Any]:
    """One model family's row: dollars per million tokens, and the shortest cacheable prompt."""
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
        "claude-opus-5": price_row(5.0, 0.50, 6.25, 512),
        "claude-opus-4-8": price_row(5.0, 0.50, 6.25, 1024),
        "claude-opus-4-7": price_row(5.0, 0.50, 6.25, 2048),
        "claude-opus-4-6": price_row(5.0, 0.50, 6.25, 4096),
        "claude-opus-4-5": price_row(5.0, 0.50, 6.25, 4096),
        "claude-opus-4": price_row(15.0, 1.50, 18.75, 1024),  # Opus 4 and 4.1
        "claude-sonnet-5": price_row(2.0, 0.20, 2.50, 1024),
        "claude-sonnet-4": price_row(3.0, 0.30, 3.75, 1024),  # Sonnet 4, 4.5, 4.6
        "claude-3-7-sonnet": price_row(3.0, 0.30, 3.75, 1024),
        "claude-haiku-4-5": price_row(1.0, 0.10, 1.25, 4096),
        "claude-3-5-haiku": price_row(0.80, 0.08, 1.0, 2048),
        "claude-3-haiku": price_row(0.25, 0.03, 0.30, 2048),
        "": price_row(3.0, 0.30, 3.75, 1024),  # any other model: Sonnet's prices
    },
}

_OPENAI = {
    "source": "https://developers.openai.com/api/docs/pricing and "
    "https://developers.openai.com/api/docs/guides/prompt-caching (caching from 1024 tokens, "
    "no charge for writes)",
    "read_on": "2026-12-03",
    "models": {
        "gpt-5.2": price_row(1.75, 0.175, 1.75, 1024),
        "gpt-5-mini": price_row(0.25, 0.025, 0.25, 1024),
        "gpt-5": price_row(1.25, 0.125, 1.25, 1024),
        "gpt-4.1": price_row(2.0, 0.50, 2.0, 1024),
        "gpt-4o-mini": price_row(0.15, 0.075, 0.15, 1024),
        "gpt-4o": price_row(2.50, 1.25, 2.50, 1024),
        "": price_row(1.25, 0.125, 1.25, 1024),  # any other model: GPT-5's prices
    },
}

_GEMINI = {
    "source": "https://ai.google.dev/gemini-api/docs/pricing and "
    "https://ai.google.dev/gemini-api/docs/caching (implicit caching, no charge for writes)",
    "read_on": "2026-12-03",
    "models": {
        "gemini-2.5-flash-lite": price_row(0.10, 0.01, 0.10, 2048),
        "gemini-2.5-flash": price_row(0.30, 0.03, 0.30, 2048),
        "gemini-2.5-pro": price_row(1.25, 0.125, 1.25, 2048),
        "": price_row(0.30, 0.03, 0.30, 4096),  # any other model: Flash prices, 3.x minimum
    },
}


def _free(what: str) -> dict[str, Any]:
    return {"source": what, "read_on": "", "models": {"": price_row(0.0, 0.0, 0.0, 0)}}


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
