"""Prompt-cache value of the pinned memory block, for every adapter, over a 40-turn conversation.

For each adapter, builds the request of every turn (with tool rounds on some turns) twice: with
the memory block pinned at the first turn (this design), and with a baseline that re-renders the
block from a moving head every turn (how peers inject memory). It prints the share of each
request that is a byte-identical prefix of the previous one, in the provider's cache order (tools,
then system, then messages; cache markers set aside), and the conversation's input cost under
Anthropic's published prices (cache write 1.25x, cache read 0.1x, 4 bytes a token).

"Reused" is the share of request k that request k+1 starts with, byte for byte (the target: at
least 99% for the pinned design); "cached" is the share of request k+1 that prefix covers.

    .venv/bin/python bench/prompt_cache.py [--turns 40]
"""

import argparse
import statistics
from typing import Any

from _setup import ROOT, setup_django

ORDER = {
    "anthropic": ["tools", "system", "messages"],
    "openai": ["tools", "messages"],
    "openai_compatible": ["tools", "messages"],
    "openai_responses": ["tools", "instructions", "input"],
    "gemini": ["tools", "systemInstruction", "contents"],
    "ollama": ["tools", "messages"],
    "offline": ["tools", "system", "messages"],
}


def strip_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_markers(v) for v in value]
    return value


def cache_order_bytes(adapter: str, request: dict[str, Any]) -> bytes:
    from webui.canonical import canonical_json

    request = strip_markers(request)
    parts = []
    for key in ORDER[adapter]:
        value = request.get(key)
        if isinstance(value, list) and key != "tools":
            parts.extend(canonical_json(item) for item in value)
        elif value is not None:
            parts.append(canonical_json(value))
    return "\n".join(parts).encode("utf-8")


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


def conversation_requests(adapter_name: str, turns: int, *, pinned: bool) -> list[bytes]:
    from pippa_memory.pinning import render_block
    from pippa_memory.tool import MEMORY_TOOL
    from webui.models import Vessel
    from webui.prompt import HistoryMessage, Prompt, ToolRound, ToolUse
    from webui.vault import read_vault
    from webui.vessels.registry import build_adapter

    vessel = Vessel(
        slug="v", name="V", adapter=adapter_name, model="model-x", base_url="http://127.0.0.1:1/v1"
    )
    adapter = build_adapter(vessel)
    vault = read_vault(str(ROOT / "demo/vaults/pippa")).text
    memories = [f"Memory number {i}: the household did thing {i}." for i in range(12)]
    history: list[HistoryMessage] = []
    requests = []
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
        requests.append(
            cache_order_bytes(
                adapter_name, adapter.build_request(prompt=prompt, tools=[MEMORY_TOOL])
            )
        )
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
        history.append(HistoryMessage(id=f"m{turn}", role="user", text=user))
        history.append(
            HistoryMessage(
                id=f"a{turn}",
                role="assistant",
                text=f"Reply {turn}: the plans are going well. " * 3,
                rounds=rounds,
            )
        )
    return requests


def anthropic_cost(requests: list[bytes]) -> float:
    """Input cost in uncached-token units: cache reads 0.1x, the rest written to the cache 1.25x."""
    total = 0.0
    previous = b""
    for request in requests:
        reused = common_prefix(previous, request)
        total += (reused * 0.1 + (len(request) - reused) * 1.25) / 4
        previous = request
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    setup_django()
    print(f"Share of each request reused as a byte prefix of the next, {args.turns} turns")
    print(
        f"{'adapter':18s} {'pinned min':>10s} {'pinned median':>13s} {'baseline median':>15s}"
        f" {'pinned cached':>13s} {'baseline cached':>15s}"
    )
    summary = {}
    for adapter in ORDER:
        results = {}
        for pinned in (True, False):
            requests = conversation_requests(adapter, args.turns, pinned=pinned)
            pairs = list(zip(requests, requests[1:], strict=False))
            reused = [common_prefix(a, b) / len(a) for a, b in pairs]
            cached = [common_prefix(a, b) / len(b) for a, b in pairs]
            results[pinned] = (
                min(reused),
                statistics.median(reused),
                statistics.median(cached),
                requests,
            )
        summary[adapter] = results
        print(
            f"{adapter:18s} {results[True][0]:10.2%} {results[True][1]:13.2%} {results[False][1]:15.2%}"
            f" {results[True][2]:13.2%} {results[False][2]:15.2%}"
        )
    pinned_requests, baseline_requests = (
        summary["anthropic"][True][3],
        summary["anthropic"][False][3],
    )
    uncached = sum(len(r) for r in pinned_requests) / 4
    pinned_cost, baseline_cost = anthropic_cost(pinned_requests), anthropic_cost(baseline_requests)
    print("Anthropic input cost of the whole conversation (uncached = 1.00):")
    print(f"  pinned   {pinned_cost / uncached:5.2f}")
    print(f"  baseline {baseline_cost / uncached:5.2f}")
    print(f"  baseline / pinned {baseline_cost / pinned_cost:5.2f}")


if __name__ == "__main__":
    main()
