"""Settling a turn's pins: the one step before assembly that writes what the prompt is built from.

A conversation fixes its front at its first turn: the vault base (a :class:`VaultSnapshot` named on
``Conversation.vault_sha256``), what each extension's memory block holds, the viewer disclosure
(``Conversation.disclosure``: a rename or a staff toggle reaches the next conversation) and the
tool definitions (``Conversation.offered_tools``). Each pin is a conditional update, so two
concurrent first turns end with one. At a later turn nothing of the host's moves; an extension may
do a documented re-pin, and says why (:meth:`~webui.extensions.TurnExtension.settle`), so the
cache ledger (:mod:`webui.ledger.recorder`) can name the cause of the drift.
:func:`webui.prompt.assembly.assemble_prompt` then only reads what was pinned here.
"""

import hashlib

from django.db import IntegrityError, transaction

from webui.extensions import TurnContext, registered_extensions
from webui.models import Conversation, VaultSnapshot
from webui.prompt.vault import read_vault


def pin_vault_base(conversation: Conversation) -> None:
    """Read the soul's vault and pin it on ``conversation``, unless it is pinned already; an edit
    to the vault then moves no running conversation's prompt (it reaches the next one).
    Afterwards ``conversation.vault_sha256`` is current.

    Raises :class:`webui.prompt.vault.VaultError` when the vault cannot be read.
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


def viewer_disclosure(conversation: Conversation) -> str:
    """Who is talking, in words the soul reads after its vault and memory (as they are now:
    :func:`pin_disclosure` fixes them for the conversation)."""
    viewer = conversation.viewer
    if viewer is None:
        kind = Conversation.Kind(conversation.kind).label.lower()
        return f"No household member is present in this conversation: it is an unattended {kind}."
    name = viewer.get_full_name() or viewer.get_username()
    role = "a household admin" if viewer.is_staff else "a household member"
    return f"You are talking with {name}, {role}."


#: The drift cause for a conversation from before disclosures were pinned, pinned at a later turn.
DISCLOSURE_PINNED = "disclosure_pinned"


def pin_disclosure(conversation: Conversation) -> bool:
    """Pin the viewer disclosure on ``conversation`` as it reads now, unless it is pinned already:
    a member who renames themselves, or is made staff, then moves no running conversation's
    prompt. Returns whether this call pinned; afterwards ``conversation.disclosure`` is current."""
    if conversation.disclosure:
        return False
    won = Conversation.objects.filter(pk=conversation.pk, disclosure="").update(
        disclosure=viewer_disclosure(conversation)
    )
    conversation.refresh_from_db(fields=["disclosure"])
    return bool(won)


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


def settle_pins(turn: TurnContext) -> dict[str, str]:
    """Pin, before the prompt is assembled, whatever of the conversation is not pinned yet: the
    vault base, then each extension's :meth:`~webui.extensions.TurnExtension.settle`, then the
    viewer disclosure and the tool definitions. At a first turn that is all four; at a later turn
    only an extension may write (and a conversation from before disclosures were pinned pins its
    own, once).

    Returns the known causes of what this settling moved at a later turn, by prompt section
    (``{"memory": "forgotten"}``, say), for the cache ledger; empty at a first turn.

    Raises :class:`webui.prompt.vault.VaultError` when the vault must be read and cannot be; nothing else
    is pinned then, so the retry is a first turn in full.
    """
    causes: dict[str, str] = {}
    pin_vault_base(turn.conversation)
    moved = [extension.settle(turn=turn) for extension in registered_extensions()]
    if not turn.first_turn and any(moved):
        causes["memory"] = "; ".join(cause for cause in moved if cause)
    if pin_disclosure(turn.conversation) and not turn.first_turn:
        causes["disclosure"] = DISCLOSURE_PINNED
    pin_offered_tools(turn)
    return causes
