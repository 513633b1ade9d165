"""No member's words reach any log line: when the engine fails (refused, a 500, an answer of the
wrong shape, garbage), the memory page's search, the memory API's search, the memory tool's
recall and ask each log what failed, and no record (message, traceback, stack, at any level,
the HTTP library's own debug lines included) holds a word the member typed, plain or as it went
into a URL. What the test sends goes to the reference engine over a real socket."""

import logging
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from django.test import Client

from reference_engine.server import ReferenceEngine
from webui.models import Conversation
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db

#: What the member types: words no code or message of the site holds.
WORDS = ["quokkafig", "zanzibarite", "marmalune"]
TYPED = " ".join(WORDS)
FAULTS = [
    ("down", {}),
    ("error", {"status": 500}),
    ("wrong_shape", {}),
    ("garbage", {}),
]


def every_line(records: list[logging.LogRecord]) -> str:
    """All that the handlers would write for ``records``: messages, tracebacks, stacks."""
    formatter = logging.Formatter()
    return "\n".join(formatter.format(record) for record in records)


def spellings() -> set[str]:
    """Each word as typed and as a URL carries it (the phrase too)."""
    found = {TYPED, quote(TYPED), quote_plus(TYPED)}
    for word in WORDS:
        found |= {word, quote(word)}
    return found


@pytest.mark.parametrize(("mode", "options"), FAULTS, ids=[mode for mode, _ in FAULTS])
def test_a_failing_engine_leaves_no_member_words_in_any_log_line(
    memory_on: ReferenceEngine,
    conversation: Conversation,
    user: Any,
    configure: Any,
    caplog: pytest.LogCaptureFixture,
    mode: str,
    options: dict[str, Any],
) -> None:
    configure(BREAKER_FAIL_MAX=1000)  # every call reaches the failing engine
    memory_on.set_fault(mode, **options)
    page = Client()
    page.force_login(user)
    caplog.set_level(logging.DEBUG)

    searched = page.get("/memory/", {"q": TYPED})
    listed = page.get("/api/memory/items/", {"soul": "pippa", "q": TYPED})
    recalled = run_turn(conversation=conversation, text=f"recall {TYPED}")
    asked = run_turn(conversation=conversation, text=f"ask {TYPED}")

    assert searched.status_code == 200  # the page says memory is unavailable; it does not fail
    assert listed.status_code == 503, listed.content[:300]
    assert listed.json()["error"]["code"] == "memory_unavailable"
    for result in (recalled, asked):
        assert result.assistant_message.tool_uses[0]["output"]["error"] == "memory_unavailable"
    failed = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert failed, "the engine's failures were not logged at all"
    lines = every_line(caplog.records)
    leaked = sorted(spelling for spelling in spellings() if spelling in lines)
    assert not leaked, f"member words in the log: {leaked}\n{lines[-3000:]}"
