"""Settling a turn's pins: the one step before assembly that writes what the prompt is built from.

A conversation fixes its front at its first turn: the vault base (a :class:`VaultSnapshot` named on
``Conversation.vault_sha256``), what each extension's memory block holds, and the tool definitions
(``Conversation.offered_tools``). Each pin is a conditional update, so two concurrent first turns
end with one. At a later turn nothing of the host's moves; an extension may do a documented
re-pin. :func:`webui.assembly.assemble_prompt` then only reads what was pinned here.
"""

import hashlib

from django.db import IntegrityError, transaction

from webui.extensions import TurnContext, registered_extensions
from webui.models import Conversation, VaultSnapshot
from webui.vault import read_vault


def pin_vault_base(conversation: Conversation) -> None:
    """Read the soul's vault and pin it on ``conversation``, unless it is pinned already; an edit
    to the vault then moves no running conversation's prompt (it reaches the next one).
    Afterwards ``conversation.vault_sha256`` is current.

    Raises :class:`webui.vault.VaultError` when the vault cannot be read.
    """
    if conversation.vault_sha256:
        return
    text = read_vault(conversation.soul.vault_path).text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        with transaction.atomic():
            VaultSnapshot.objects.get_or_create(
                soul_id=conversation.soul_id, sha256=digest, defaults={"text": text}
            )
    except IntegrityError:
        pass  # another first turn stored the same content a moment ago
    # A concurrent first turn may have pinned another read: the first update wins, and the
    # refresh gives this turn the winner's pin.
    Conversation.objects.filter(pk=conversation.pk, vault_sha256="").update(vault_sha256=digest)
    conversation.refresh_from_db(fields=["vault_sha256"])


def pin_offered_tools(turn: TurnContext) -> None:
    """Ask the extensions for their tools and store the definitions for the whole conversation,
    unless they are stored already. Afterwards ``conversation.offered_tools`` is current."""
    conversation = turn.conversation
    if conversation.offered_tools is not None:
        return
    definitions = [
        tool.as_dict()
        for extension in registered_extensions()
        for tool in extension.tools(turn=turn)
    ]
    Conversation.objects.filter(pk=conversation.pk, offered_tools__isnull=True).update(
        offered_tools=definitions
    )
    conversation.refresh_from_db(fields=["offered_tools"])


def settle_pins(turn: TurnContext) -> None:
    """Pin, before the prompt is assembled, whatever of the conversation is not pinned yet: the
    vault base, then each extension's :meth:`~webui.extensions.TurnExtension.settle`, then the tool
    definitions. At a first turn that is all three; at a later turn only an extension may write.

    Raises :class:`webui.vault.VaultError` when the vault must be read and cannot be; nothing else
    is pinned then, so the retry is a first turn in full.
    """
    pin_vault_base(turn.conversation)
    for extension in registered_extensions():
        extension.settle(turn=turn)
    pin_offered_tools(turn)
