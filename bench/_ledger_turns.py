"""The second figure of ``prompt_cache.py``: real turns on each adapter against a provider double
that reports cached tokens as that provider does, and the cache ledger read back.

The provider's answers are the shapes the contract tests use (``provider_doubles/``,
served through ``responses``); only their usage is the double's (``_provider_cache``), written into
the fields each provider reports it in. The offline vessel answers itself; its usage gets the
double's automatic prefix cache too. Ollama reports only the tokens it evaluated, so the ledger
cannot see its cache: its figure says so instead of a share.
"""

import json
from typing import Any

import responses
from _provider_cache import ADAPTERS, MODELS, TOKEN_BYTES, ProviderCache, tokens
from _report import figure

TOOL_EVERY = 5


def with_usage(adapter: str, body: dict[str, Any], seen: Any, output: int) -> dict[str, Any]:
    """``body`` with its usage replaced by what the double saw, in the provider's own fields."""
    if adapter == "anthropic":
        uncached = seen.prompt - seen.read - seen.written
        body["usage"] = {
            "input_tokens": uncached,
            "cache_creation_input_tokens": seen.written,
            "cache_read_input_tokens": seen.read,
            "output_tokens": output,
        }
    elif adapter in ("openai", "openai_compatible"):
        body["usage"] = {
            "prompt_tokens": seen.prompt,
            "completion_tokens": output,
            "total_tokens": seen.prompt + output,
            "prompt_tokens_details": {"cached_tokens": seen.read},
        }
    elif adapter == "openai_responses":
        body["usage"] = {
            "input_tokens": seen.prompt,
            "input_tokens_details": {"cached_tokens": seen.read},
            "output_tokens": output,
            "total_tokens": seen.prompt + output,
        }
    elif adapter == "gemini":
        body["usageMetadata"] = {
            "promptTokenCount": seen.prompt,
            "cachedContentTokenCount": seen.read,
            "candidatesTokenCount": output,
            "totalTokenCount": seen.prompt + output,
        }
    elif adapter == "ollama":  # the KV cache is reused, but only evaluated tokens are reported
        body["prompt_eval_count"] = seen.prompt - seen.read
        body["eval_count"] = output
    return body


def serve(rsps: responses.RequestsMock, kit: Any, cache: ProviderCache) -> None:
    """Answer ``kit``'s endpoint as the contract tests do, with the double's usage."""
    from provider_doubles import brain

    counter = [0]

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        user_text, results = kit.last_turn(body)
        said = brain(user_text, results, counter)
        reply = (
            kit.call_body(said["calls"], said["text"])
            if said["calls"]
            else kit.text_body(said["text"])
        )
        seen = cache.answer(body)
        reply = with_usage(kit.adapter, reply, seen, output=tokens(len(said["text"])) + 1)
        return 200, {"Content-Type": "application/json"}, json.dumps(reply)

    rsps.add_callback(responses.POST, kit.served_url, callback=answer)


def offline_double(cache: ProviderCache) -> Any:
    """The offline vessel's ``send`` with the double's usage in its answer."""
    from webui.vessels.offline import OfflineAdapter

    original = OfflineAdapter.send

    def send(self: OfflineAdapter, request: dict[str, Any]) -> dict[str, Any]:
        answer = original(self, request)
        seen = cache.answer(request)
        answer["usage"] = {
            "input_tokens": seen.prompt,
            "output_tokens": answer["usage"]["output_tokens"],
            "cached_input_tokens": seen.read,
        }
        return answer

    return original, send


def converse(vessel: Any, household: dict[str, Any], turns: int) -> Any:
    """``turns`` turns in a fresh conversation on ``vessel``; a tool round every fifth turn."""
    from webui.models import Conversation
    from webui.turns.service import run_turn

    chat = Conversation.objects.create(
        soul=household["soul"], vessel=vessel, viewer=household["user"]
    )
    for turn in range(1, turns + 1):
        text = (
            "recall weekend plans"
            if turn % TOOL_EVERY == 0
            else f"Turn {turn}: how are the plans for the weekend going?"
        )
        run_turn(conversation=chat, text=text)  # a failed turn raises, and the bench stops
    return chat


def shares(chat: Any, minimum: int) -> tuple[list[float], int, int]:
    """``(shares, calls, drifts)``: per call after the first whose previous stable prefix reaches
    ``minimum`` tokens, its cached tokens over that prefix's tokens."""
    from webui.models import VesselCall

    calls = list(VesselCall.objects.filter(conversation=chat).order_by("id"))
    found = []
    for previous, call in zip(calls, calls[1:], strict=False):
        expected = tokens(previous.prefix_bytes)
        if expected >= minimum and expected > 0:
            found.append(call.cache_read_tokens / expected)
    return found, len(calls), sum(1 for call in calls if call.drift_section)


def make_vessel(kit: Any, adapter: str, model: str) -> Any:
    import os

    from webui.models import Vessel

    if kit.key_env:
        os.environ[kit.key_env] = "sk-bench"
    return Vessel.objects.create(
        slug=f"bench-{adapter.replace('_', '-')}",
        name=f"Bench {adapter}",
        adapter=adapter,
        model=model,
        base_url=kit.base_url,
        api_key_env=kit.key_env or "",
    )


def run_adapter(adapter: str, model: str, household: dict[str, Any], turns: int, engine: str):
    """One adapter's conversation against its double; the chat and its family's minimum."""
    import provider_doubles
    from webui.ledger.prices import cache_price
    from webui.vessels.offline import OfflineAdapter
    from webui.vessels.registry import build_adapter

    kit = {k().adapter: k for k in provider_doubles.ALL_KITS}[adapter]()
    if adapter == "gemini":
        model = kit.model  # its endpoint names the model
    vessel = make_vessel(kit, adapter, model)
    minimum = cache_price(adapter=adapter, model=model).min_cacheable_tokens
    cache = ProviderCache(
        adapter=build_adapter(vessel), minimum=minimum, explicit=adapter == "anthropic"
    )
    if adapter == "offline":
        original, send = offline_double(cache)
        OfflineAdapter.send = send
        try:
            return converse(vessel, household, turns), minimum
        finally:
            OfflineAdapter.send = original
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add_passthru(engine)
        serve(rsps, kit, cache)
        return converse(vessel, household, turns), minimum


def ledger_figures(turns: int, *, section: str) -> None:
    """Print and report the ledger figure for every adapter."""
    from _setup import configure_memory, household

    from reference_engine.server import ReferenceEngine

    engine = ReferenceEngine(token="bench-token").start()
    for fact in ("The tea is in the blue tin.", "Picnic on Saturday at the lake."):
        engine.state.remember("pippa", fact)
    configure_memory(ENABLED=True, URL=engine.url)
    home = household()
    print(
        f"2. The ledger of a {turns}-turn conversation on each adapter, against a provider double"
    )
    print("   (prefix match from the start in cache order; each model's minimum length respected)")
    print(
        f"   {'adapter':18s} {'calls':>5s} {'drift':>5s} {'measured':>8s} {'min share':>9s} {'at 100%':>8s}"
    )
    try:
        for adapter in ADAPTERS:
            chat, minimum = run_adapter(adapter, MODELS[adapter], home, turns, engine.url)
            found, calls, drifts = shares(chat, minimum)
            what = (
                f"{turns} turns through the turn service (tool round every {TOOL_EVERY}th), "
                f"ledger rows read back; cached tokens over the previous call's stable prefix "
                f"({TOKEN_BYTES} bytes a token), calls whose prefix reaches {minimum} tokens"
            )
            if adapter == "ollama":
                print(f"   {adapter:18s} {calls:5d} {drifts:5d}   Ollama reports no cached count")
                figure(
                    "Ledger cached share of the stable prefix, ollama",
                    f"not reported: Ollama gives only the tokens it evaluated ({drifts} drift)",
                    what=what,
                    section=section,
                )
                continue
            full = sum(1 for share in found if share >= 1.0)
            low = min(found) if found else 0.0
            print(f"   {adapter:18s} {calls:5d} {drifts:5d} {len(found):8d} {low:9.2%} {full:8d}")
            figure(
                f"Ledger cached share of the stable prefix, {adapter}",
                f"{low:.2%} min over {len(found)} calls ({full} at 100%, {drifts} drift)",
                target="100% on every call after the first that reaches the minimum",
                met=bool(found) and low >= 1.0 and drifts == 0,
                what=what,
                section=section,
            )
    finally:
        engine.stop()
