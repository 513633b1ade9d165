"""Provider doubles: one kit per vessel adapter, with each provider's payloads shaped as it documents
them, for the tests and the benchmarks alike (neither reaches into the other's folder).
"""

from collections.abc import Callable
from typing import Any

from provider_doubles.anthropic import AnthropicKit as AnthropicKit
from provider_doubles.base import SLOT_PREFIX as SLOT_PREFIX
from provider_doubles.base import USAGE as USAGE
from provider_doubles.base import VERB as VERB
from provider_doubles.base import Kit as Kit
from provider_doubles.base import PacedBody as PacedBody
from provider_doubles.base import brain as brain
from provider_doubles.base import paced as paced
from provider_doubles.base import pieces as pieces
from provider_doubles.base import strip_cache_markers as strip_cache_markers
from provider_doubles.base import strip_slot as strip_slot
from provider_doubles.gemini import GeminiKit as GeminiKit
from provider_doubles.offline import OfflineKit as OfflineKit
from provider_doubles.ollama import OllamaKit as OllamaKit
from provider_doubles.openai import OpenAICompatibleKit as OpenAICompatibleKit
from provider_doubles.openai import OpenAIKit as OpenAIKit
from provider_doubles.openai import OpenAIResponsesKit as OpenAIResponsesKit

HTTP_KITS: list[Callable[[], Kit]] = [
    AnthropicKit,
    OpenAIKit,
    OpenAIResponsesKit,
    GeminiKit,
    OllamaKit,
    OpenAICompatibleKit,
]
ALL_KITS: list[Callable[[], Kit]] = [*HTTP_KITS, OfflineKit]


def kit_vessel(kit: Kit, monkeypatch: Any, **fields: Any) -> Any:
    """A saved vessel for ``kit``, with its key variable set (``monkeypatch`` undoes it)."""
    from webui.models import Vessel

    if kit.key_env:
        monkeypatch.setenv(kit.key_env, "sk-test-SECRET")
    fields.setdefault("slug", "v")
    fields.setdefault("name", kit.adapter)
    return Vessel.objects.create(
        adapter=kit.adapter,
        model=kit.model,
        base_url=kit.base_url,
        api_key_env=kit.key_env or "",
        **fields,
    )
