"""Prompt assembly in the fixed order of DESIGN.md section 3.

System: vault base, memory block (from extensions), viewer disclosure (pinned, like the vault base). Then the persisted history,
then the newest user message, then the per-turn slot (the current time and extension parts). Only
the slot differs from one turn to the next; everything else is rebuilt from stored rows. Assembly
only reads: what the front of the prompt holds was pinned before, by :func:`webui.prompt.pins.settle_pins`.
"""

import logging
from datetime import datetime

from django.utils import timezone

from webui.bounded_cache import CacheFromSettings, text_size
from webui.conf import webui_settings
from webui.extensions import TurnContext, registered_extensions
from webui.models import Conversation, VaultSnapshot
from webui.prompt.history import conversation_history
from webui.prompt.vault import read_vault
from webui.prompt_types import Prompt

logger = logging.getLogger(__name__)


class UnsettledTurn(RuntimeError):
    """A prompt was asked for before the turn's pins were settled: a mistake in the caller."""


def pinned_disclosure(conversation: Conversation) -> str:
    """The viewer disclosure pinned on ``conversation`` at its first turn (by
    :func:`webui.prompt.pins.settle_pins`); :class:`UnsettledTurn` for one whose pins were never settled."""
    if not conversation.disclosure:
        raise UnsettledTurn(
            f"Conversation {conversation.pk} has no pinned viewer disclosure: settle the turn's "
            "pins (webui.prompt.pins.settle_pins) before assembling its prompt."
        )
    return conversation.disclosure


def current_time_part(now: datetime) -> str:
    """The per-turn slot's clock line: changes every turn, so it never sits in the stable prefix.
    In the household's zone (``DJANGO_TIME_ZONE``), never the zone a member's request chose for
    their pages: a turn reads the same clock streamed or not, from any process."""
    local = timezone.localtime(now, timezone.get_default_timezone())
    return f"Current time: {local:%A %d %B %Y, %H:%M} ({local.tzname()})."


def memory_blocks(turn: TurnContext) -> list[str]:
    """The extensions' blocks for the front of the prompt, in registration order."""
    blocks = []
    for extension in registered_extensions():
        block = extension.memory_block(turn=turn)
        if block:
            blocks.append(block)
    return blocks


def turn_slot(turn: TurnContext, *, now: datetime) -> tuple[str, ...]:
    """The per-turn slot: the clock, then whatever the extensions add for this turn only."""
    parts = [current_time_part(now)]
    for extension in registered_extensions():
        try:
            parts.extend(part for part in extension.turn_slot_parts(turn=turn) if part)
        except Exception:
            # The slot is per turn and never stored, so a failing extension costs only its own part.
            logger.exception("Extension %s failed to fill the per-turn slot", extension.name)
    return tuple(parts)


#: Vault bases by (soul id, sha256): snapshots never change, so a process may cache them
#: (``WEBUI_VAULT_CACHE_TEXTS`` and ``WEBUI_VAULT_CACHE_MAX_BYTES`` bound it).
VAULT_TEXTS: CacheFromSettings[tuple[int, str], str] = CacheFromSettings(
    lambda: {
        "max_entries": webui_settings.VAULT_CACHE_TEXTS,
        "max_bytes": webui_settings.VAULT_CACHE_MAX_BYTES,
    },
    size=text_size,
)


def pinned_vault_base(conversation: Conversation) -> str:
    """The vault base pinned on ``conversation`` at its first turn (by
    :func:`webui.prompt.pins.settle_pins`), read from its snapshot; nothing is written.

    A snapshot gone missing is logged and the vault read as it is now. Raises
    :class:`webui.prompt.vault.VaultError` when that read fails, and :class:`UnsettledTurn` for a
    conversation whose pins were never settled.
    """
    sha = conversation.vault_sha256
    if not sha:
        raise UnsettledTurn(
            f"Conversation {conversation.pk} has no pinned vault base: settle the turn's pins "
            "(webui.prompt.pins.settle_pins) before assembling its prompt."
        )
    key = (conversation.soul_id, sha)
    text = VAULT_TEXTS.get(key)
    if text is None:
        snapshot = VaultSnapshot.objects.filter(soul_id=conversation.soul_id, sha256=sha).first()
        if snapshot is None:
            logger.error(
                "Vault snapshot %s of %s is missing; reading the vault.", sha, conversation.pk
            )
            return read_vault(conversation.soul.vault_path).text
        text = snapshot.text
        VAULT_TEXTS.put(key, text)
    return text


def assemble_prompt(turn: TurnContext, *, now: datetime | None = None) -> Prompt:
    """The prompt for the turn answering ``turn.user_message``, built from what
    :func:`webui.prompt.pins.settle_pins` pinned; it only reads (the extensions' memory blocks too).

    Raises :class:`webui.prompt.vault.VaultError` when the soul's vault must be read and cannot be.
    """
    conversation = turn.conversation
    sections = (
        pinned_vault_base(conversation),
        *memory_blocks(turn),
        pinned_disclosure(conversation),
    )
    return Prompt(
        conversation_id=str(conversation.id),
        system_sections=sections,
        history=conversation_history(conversation, before=turn.user_message),
        user_text=turn.user_message.content,
        turn_slot=turn_slot(turn, now=now or timezone.now()),
        user_message_id=str(turn.user_message.id),
    )
