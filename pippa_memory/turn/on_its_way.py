"""Remembers on their way to memory: noted by the memory tool in this conversation, in a turn event
the engine has not taken yet.

A ``remember`` reaches the engine with its turn's event (:mod:`pippa_memory.outbox.events`), seconds
after the turn is saved, or hours later when the engine was down. A recall in the same
conversation meanwhile would miss it silently; instead it names the ones its query matches, so the
member reads "I noted that a moment ago; it is on its way to memory". They are the viewer's own
words in the viewer's own conversation, so nobody sees anything they did not say.
"""

import re
import uuid
from typing import Any

from pippa_memory.models import OutboxEvent
from pippa_memory.turn.tool import TOOL_NAME
from webui.models import Conversation, Message

WORD = re.compile(r"\w+", re.UNICODE)
#: Words too common to say that a remember is about what was recalled.
# fmt: off
COMMON_WORDS = frozenset({
    "a", "an", "and", "are", "at", "be", "do", "for", "i", "in", "is", "it", "me", "my", "of",
    "on", "or", "so", "that", "the", "this", "to", "was", "we", "what", "who", "you",
})
# fmt: on


def words_of(text: str) -> set[str]:
    return set(WORD.findall(text.lower())) - COMMON_WORDS


def undelivered_turns(conversation: Conversation) -> list[uuid.UUID]:
    """The ids of the conversation's assistant messages whose turn event the engine has not taken
    yet (still pending: not delivered, not dead). Reads the outbox by its status only."""
    return list(
        OutboxEvent.objects.filter(
            conversation_id=conversation.id, status=OutboxEvent.Status.PENDING
        ).values_list("message_id", flat=True)
    )


def noted_remembers(conversation: Conversation) -> list[dict[str, Any]]:
    """What the memory tool noted in the conversation's undelivered turns, oldest first, as
    ``{"text", "scope"}``: the input of each ``remember`` whose result was ``noted``."""
    turns = undelivered_turns(conversation)
    if not turns:
        return []
    rows = Message.objects.filter(conversation=conversation, pk__in=turns).order_by("sequence")
    noted = []
    for tool_uses in rows.values_list("tool_uses", flat=True):
        for use in tool_uses:
            tool_input, output = use.get("input"), use.get("output")
            if (
                use.get("name") == TOOL_NAME
                and isinstance(tool_input, dict)
                and tool_input.get("verb") == "remember"
                and isinstance(tool_input.get("text"), str)
                and isinstance(output, dict)
                and output.get("status") == "noted"
            ):
                noted.append({"text": tool_input["text"].strip(), "scope": output.get("scope")})
    return noted


def on_its_way(conversation: Conversation, query: str) -> list[dict[str, Any]]:
    """The noted remembers of ``conversation`` still on their way to memory that share a word
    with ``query`` (common words aside)."""
    wanted = words_of(query)
    return [noted for noted in noted_remembers(conversation) if wanted & words_of(noted["text"])]


def with_on_its_way(
    result: dict[str, Any], pending: list[dict[str, Any]], *, found: list[dict[str, Any]]
) -> dict[str, Any]:
    """``result`` with the ``pending`` remembers the engine did not give back among ``found`` (one
    delivered meanwhile is found, not pending), and a note in words; unchanged when none."""
    have = {item.get("text", "").strip() for item in found}
    pending = [noted for noted in pending if noted["text"] not in have]
    if not pending:
        return result
    return {
        **result,
        "pending": pending,
        "pending_note": (
            "These were noted in this conversation a moment ago and are on their way to "
            "memory, not in it yet: say so if you use them."
        ),
    }
