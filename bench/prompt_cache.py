"""Prompt-cache value of the pinned memory block, on all seven adapters.

**What it measures.** Every comparison is on the bytes each adapter really sends (its canonical
JSON body), read back in the order the providers cache a request, **tools, then system, then
messages**, with cache markers (``cache_control``) removed: a marker says where the cache breaks,
not what it holds, and Anthropic's moves every turn.

1. *Prefix reuse, requests built directly.* For a 40-turn conversation (a tool round every fifth
   turn), every turn's request is built twice: with the memory block pinned at the first turn
   (this design) and with a baseline that re-renders the block from a moving head every turn (how
   peers inject memory). "Reused" is the share of request k that request k+1 starts with, byte for
   byte in that order (reported, no target: the per-turn slot and the closing of the message
   list drop out by design, more of a short request). The Anthropic cost of both arms comes from
   the provider double's cache (``provider_doubles/prompt_cache.py``: Sonnet 4.x prices from the
   price table, its minimum cacheable length respected: a prompt below it is neither written nor
   read, and is billed as plain input).

That the cache ledger reads back, on real turns, the whole of the previous call's stable prefix as
cached is held by a test (``tests/webui/ledger/test_ledger.py``), not a figure: the double reports what it
saw, so against it the share is true by construction.

    cd bench && ../.venv/bin/python prompt_cache.py [--turns 40] [--database sqlite|postgres] [--quick]
"""

import json
import statistics
from typing import Any

from _report import figure
from _setup import ROOT, arguments, setup_django

from provider_doubles.prompt_cache import ADAPTERS, MODELS, ProviderCache

ORDER_WORDS = "tools, then system, then messages; cache markers removed; on the bytes sent"
SECTION = "Prompt cache"


def sent_bytes(adapter: Any, request: dict[str, Any]) -> bytes:
    """The body the adapter puts on the wire for ``request`` (the offline vessel: its request)."""
    from webui.text.canonical import canonical_bytes

    wire = getattr(adapter, "wire_body", None)
    return canonical_bytes(wire(request) if wire else request)


def cache_order(adapter: Any, body: bytes) -> bytes:
    """``body`` re-cut in the providers' cache order, markers removed, each part as sent."""
    from webui.text.canonical import canonical_bytes
    from webui.vessels.encoding import without_markers

    request = without_markers(json.loads(body), adapter.cache_marker_keys)
    keys = [adapter.tools_key, adapter.system_key, adapter.messages_key]
    return b"".join(canonical_bytes(request.get(key) or []) for key in keys if key)


def common_prefix(a: bytes, b: bytes) -> int:
    size = min(len(a), len(b))
    low, high = 0, size
    while low < high:  # binary search on equal prefixes
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def built_requests(adapter_name: str, turns: int, *, pinned: bool) -> tuple[Any, list[bytes]]:
    """The adapter and the bodies it would send on each of ``turns`` turns."""
    from pippa_memory.pins.blocks import render_block
    from pippa_memory.turn.tool import MEMORY_TOOL
    from webui.models import Vessel
    from webui.prompt.vault import read_vault
    from webui.prompt_types import HistoryMessage, Prompt
    from webui.vessels.registry import build_adapter

    vessel = Vessel(
        slug="v",
        name="V",
        adapter=adapter_name,
        model=MODELS[adapter_name],
        base_url="http://127.0.0.1:1/v1",
    )
    adapter = build_adapter(vessel)
    vault = read_vault(str(ROOT / "demo/vaults/pippa")).text
    memories = [f"Memory number {i}: the household did thing {i}." for i in range(12)]
    history: list[HistoryMessage] = []
    bodies = []
    for turn in range(1, turns + 1):
        head = 1 if pinned else turn
        known = memories + [f"Learned at turn {t}." for t in range(1, head)]
        block = render_block(
            soul_slug="pippa", revision=f"r{head}", text="\n".join(f"- {m}" for m in known)
        )
        user = f"Turn {turn}: how are the plans for the weekend going, and what do you remember?"
        prompt = Prompt(
            conversation_id="c-bench",
            system_sections=(vault, block, "You are talking with Alice, a household member."),
            history=tuple(history),
            user_text=user,
            turn_slot=(f"Current time: Wednesday 02 December 2026, 09:{turn:02d} (UTC).",),
            user_message_id=f"m{turn}",
        )
        bodies.append(
            sent_bytes(adapter, adapter.build_request(prompt=prompt, tools=[MEMORY_TOOL]))
        )
        history.extend(turn_history(turn, user))
    return adapter, bodies


def turn_history(turn: int, user: str) -> list[Any]:
    """Turn ``turn`` as the next turn's history: the user's message and the reply, with a recall
    round every fifth turn."""
    from webui.prompt_types import HistoryMessage, ToolRound, ToolUse

    rounds: tuple[ToolRound, ...] = ()
    if turn % 5 == 0:
        use = ToolUse(
            id=f"call_{turn}",
            name="memory",
            input={"verb": "recall", "text": "weekend"},
            output={
                "match": "exact",
                "items": [{"text": "Picnic on Saturday.", "at": "2026-12-01T10:00:00Z"}],
            },
        )
        rounds = (ToolRound(text="", tool_uses=(use,)),)
    reply = f"Reply {turn}: the plans are going well. " * 3
    return [
        HistoryMessage(id=f"m{turn}", role="user", text=user),
        HistoryMessage(id=f"a{turn}", role="assistant", text=reply, rounds=rounds),
    ]


def anthropic_cost(adapter: Any, bodies: list[bytes]) -> tuple[float, float, int, int]:
    """``(cost, uncached cost, calls below the minimum, the minimum)`` of ``bodies`` sent to Anthropic, with
    what the double reports read and written at Sonnet's prices and minimum length."""
    from webui.ledger.bill import call_bill, combined
    from webui.ledger.prices import cache_price

    price = cache_price(adapter="anthropic", model=MODELS["anthropic"])
    cache = ProviderCache(adapter=adapter, minimum=price.min_cacheable_tokens, explicit=True)
    bills = []
    for body in bodies:
        seen = cache.report_for(json.loads(body))
        bills.append(
            call_bill(
                price,
                input_tokens=seen.prompt,
                cache_read_tokens=seen.read,
                cache_write_tokens=seen.written,
            )
        )
    short = sum(1 for b in bills if b.cacheable_input_tokens == 0)
    total = combined(bills)
    return total.cost, total.uncached_cost, short, price.min_cacheable_tokens


def prefix_reuse(turns: int) -> None:
    print(f"1. Share of each request reused as a byte prefix of the next, {turns} turns")
    print(f"   compared in the providers' cache order ({ORDER_WORDS})")
    print(f"   {'adapter':18s} {'pinned min':>10s} {'pinned median':>13s} {'baseline median':>15s}")
    anthropic: dict[bool, tuple[Any, list[bytes]]] = {}
    for name in ADAPTERS:
        shares = {}
        for pinned in (True, False):
            adapter, bodies = built_requests(name, turns, pinned=pinned)
            ordered = [cache_order(adapter, body) for body in bodies]
            pairs = list(zip(ordered, ordered[1:], strict=False))
            shares[pinned] = [common_prefix(a, b) / len(a) for a, b in pairs]
            if name == "anthropic":
                anthropic[pinned] = (adapter, bodies)
        low, middle = min(shares[True]), statistics.median(shares[True])
        print(f"   {name:18s} {low:10.2%} {middle:13.2%} {statistics.median(shares[False]):15.2%}")
        figure(
            f"Pinned request reused by the next, {name}",
            f"{low:.2%} min, {middle:.2%} median (baseline median {statistics.median(shares[False]):.2%})",
            what=f"{turns} turns built by the adapter, tool round every 5th; {ORDER_WORDS}",
            section=SECTION,
        )
    pinned_cost, uncached, short, minimum = anthropic_cost(*anthropic[True])
    baseline_cost, *_ = anthropic_cost(*anthropic[False])
    print("   Anthropic input cost of the whole conversation (uncached = 1.00), Sonnet 4.x:")
    print(f"     pinned   {pinned_cost / uncached:5.2f}   baseline {baseline_cost / uncached:5.2f}")
    print(f"     {short} of {turns} requests below the {minimum}-token minimum: plain input")
    figure(
        "Anthropic input cost, baseline / pinned",
        f"{baseline_cost / pinned_cost:.2f}x (pinned {pinned_cost / uncached:.2f} of uncached)",
        what=f"{turns} turns; cache writes 1.25x, reads 0.1x (price table); the minimum "
        f"cacheable length ({minimum} tokens) respected: {short} requests below it, not cached",
        section=SECTION,
    )


def main() -> None:
    args = arguments("Prompt-cache value of the pinned memory block", turns=(40, 10))
    setup_django(database=args.database, PIPPA_MEMORY_ENABLED="true")
    prefix_reuse(args.turns)


if __name__ == "__main__":
    main()
