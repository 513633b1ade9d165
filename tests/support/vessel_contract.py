"""What the vessel contract's tests share with the ledger's: the turns every vessel runs, and the
mocked provider behind one kit."""

import json
from typing import Any

import responses

from provider_doubles import Kit

#: A conversation's worth of messages every vessel is run through: tool verbs, long and short,
#: scripts, quotes, escapes and emoji.
TURNS = [
    "hello",
    "remember Zoë likes crème brûlée 🍮",
    "what did I just say?",
    "recall dessert",
    "Long one: " + "the quick brown fox jumps over the lazy dog. " * 120,
    "ask when is the party?",
    "日本語のテキストも大丈夫？",
    'quotes "double" and \\backslashes\\ and \ttabs',
    "remember the spare key is under the blue pot",
    "emoji 👩‍👩‍👧‍👦 family",
    "recall key && pot",
    "line one\nline two\n\nline four",
    "ask who feeds the cat on Sundays?",
    "numbers 1.0 1e3 0.1+0.2",
    "remember Ada's birthday is 10 December",
    "right-to-left: مرحبا",
    "recall birthday && cake && candles",
    "short",
    'remember {"json": "inside text"}',
    "<b>html</b> & entities",
    "recall nothing-matches-this",
    "goodbye",
]


class Provider:
    """The mocked provider behind one kit, and the request bodies it was sent."""

    def __init__(self, kit: Kit, rsps: responses.RequestsMock | None, captured: list[Any]) -> None:
        self.kit = kit
        self.rsps = rsps
        self.captured = captured

    @property
    def requests(self) -> list[dict[str, Any]]:
        if self.rsps is None:
            return self.captured
        return [json.loads(call.request.body) for call in self.rsps.calls]
