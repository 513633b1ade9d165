"""A member's turn that recalled a memory, and the words in it that are theirs alone: what the
admin's privacy tests look for on every page staff may open."""

from webui.models import Conversation, Message

SAID = "Please keep the surprise party for Bob a secret."
RECALL_QUERY = "party plans"
RECALLED = "Alice booked the bakery for Bob's cake."
ROUND_TEXT = "Let me look up what you told me about the cake."
#: Words from each part of the turn (what was said, the recall, its answer, the round's text).
PRIVATE_WORDS = ("surprise party", RECALL_QUERY, "booked the bakery", "look up what you told me")


def recalled_turn(conversation: Conversation) -> tuple[Message, Message]:
    """A user message and the reply that recalled a memory for it, with a round's text."""
    said = Message.objects.create(conversation=conversation, role="user", content=SAID)
    reply = Message.objects.create(
        conversation=conversation,
        role="assistant",
        content=f"Of course. {RECALLED}",
        tool_uses=[
            {
                "id": "toolu_1",
                "name": "memory",
                "input": {"verb": "recall", "query": RECALL_QUERY},
                "output": {"items": [{"id": "m1", "text": RECALLED}]},
            }
        ],
        rounds=[{"text": ROUND_TEXT, "tool_use_ids": ["toolu_1"]}],
    )
    return said, reply
