"""What a conversation's pinned memory block says to its member, read from the plug-in's tables
(for tests that run with the plug-in)."""

from pippa_memory.models import MemoryBlock
from webui.models import Conversation


def pinned_block_text(conversation: Conversation) -> str:
    conversation.refresh_from_db()
    block = MemoryBlock.objects.filter(
        soul=conversation.soul,
        revision=conversation.pinned_head,
        viewer=str(conversation.viewer_id),
    ).first()
    return block.text if block else ""
