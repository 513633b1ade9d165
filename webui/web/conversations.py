"""A member's own conversations: rename one, move one to another model, delete one. Writes only;
reads are in selectors.py.

Deleting removes the conversation's rows on this side: its messages, their saved tool rounds, and
every row of a plug-in whose key cascades with the conversation (the memory plug-in's pin records
and pending asks). It does not reach the memory engine: what the engine learned from the
conversation's turns stays learned, and a member forgets such items on the memory page (``docs/using.md``,
*Conversations*).
"""

import unicodedata

from django.db import transaction

from webui.models import Conversation, Vessel, VesselMove
from webui.turns.lock import ConversationGone, TurnBusy, TurnLock, claim_turn, release_turn

#: Longest title, in characters (the column's length).
TITLE_MAX_CHARS = Conversation._meta.get_field("title").max_length
#: Marks that turn text around unseen (bidirectional overrides and isolates); a zero-width joiner,
#: which emoji need, is allowed.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class ConversationError(ValueError):
    """A rename, move or delete that was refused; nothing changed. ``code`` names the cause."""

    def __init__(self, message: str, *, code: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = details or {}


def title_problem(title: str) -> str | None:
    """Why ``title`` (already stripped) cannot be a conversation's title, or ``None``."""
    if not title:
        return "A title cannot be empty."
    if len(title) > TITLE_MAX_CHARS:
        return f"A title may be at most {TITLE_MAX_CHARS} characters; this one has {len(title)}."
    if has_control_characters(title):
        return "A title cannot hold control characters (a tab, a newline, a direction mark)."
    return None


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds a control character, a lone surrogate or a direction mark."""
    return any(unicodedata.category(char) in ("Cc", "Cs") or char in BIDI_CONTROLS for char in text)


def claim_or_refuse(conversation: Conversation, *, then: str, keep: bool = True) -> TurnLock:
    """The conversation's turn lock (:func:`~webui.turns.lock.claim_turn`, ``keep`` passed on);
    while a turn runs, :class:`ConversationError` (``turn_in_progress``, the running turn's id in
    ``details``) whose sentence ends with ``then``, what the member may do instead. A deleted
    conversation raises :class:`~webui.turns.lock.ConversationGone`, for the caller to word."""
    try:
        return claim_turn(conversation, keep=keep)
    except TurnBusy as busy:
        raise ConversationError(
            f"A reply is being written in this conversation; {then}.",
            code="turn_in_progress",
            details={"turn_id": busy.turn_id},
        ) from None


def rename_conversation(*, conversation: Conversation, title: str) -> Conversation:
    """Give ``conversation`` the title ``title`` (spaces around it dropped).

    Raises :class:`ConversationError` (``invalid_title``) when :func:`title_problem` finds one.
    A running turn is not disturbed: its automatic title only fills an empty one.
    """
    title = title.strip()
    problem = title_problem(title)
    if problem:
        raise ConversationError(problem, code="invalid_title", details={"title": [problem]})
    Conversation.objects.filter(pk=conversation.pk).update(title=title)
    conversation.title = title
    return conversation


def delete_conversation(*, conversation: Conversation) -> None:
    """Delete ``conversation`` and every row that cascades with it, in one transaction.

    The conversation's turn lock is taken first, so no turn can start (or be running) while it
    goes: a running turn (its lease live; a lapsed one is taken over) makes this raise
    :class:`ConversationError` (``turn_in_progress``, the running turn's id in ``details``) and
    nothing is deleted. A delete that fails frees the lock. What this process cached of the
    conversation's history goes with it, as with any delete (other processes drop theirs at their
    next use of that cache, :mod:`webui.prompt.history`).
    """
    try:
        lock = claim_or_refuse(conversation, then="stop it or wait for it, then delete", keep=False)
    except ConversationGone:
        return  # deleted already: what was asked for holds
    try:
        with transaction.atomic():
            Conversation.objects.filter(pk=conversation.pk).delete()
    except Exception:
        release_turn(lock)  # the conversation stays, and takes turns again at once
        raise


def move_conversation(*, conversation: Conversation, vessel: Vessel, moved_by: object) -> None:
    """Move ``conversation`` to ``vessel`` (switched on, another than its own): its next turn
    answers there. One transaction writes the conversation's vessel and its
    :class:`~webui.models.VesselMove`, so the cache ledger names the next call's drift
    ``moved_by_member`` (a deliberate cause): the new model reads the whole prompt afresh once.

    The conversation's turn lock is taken for the write, so no reply is being written on the
    old vessel meanwhile: while one is (its lease live), :class:`ConversationError`
    (``turn_in_progress``) and nothing changes; so too for a vessel switched off
    (``vessel_switched_off``) or the one it is on already (``same_vessel``).
    """
    if not vessel.enabled:
        raise ConversationError(
            f"{vessel.name} is switched off; choose another model.", code="vessel_switched_off"
        )
    if vessel.pk == conversation.vessel_id:
        raise ConversationError(f"This chat is on {vessel.name} already.", code="same_vessel")
    try:
        lock = claim_or_refuse(conversation, then="wait for it, then move it")
    except ConversationGone:
        raise ConversationError(
            "This conversation was deleted.", code="conversation_deleted"
        ) from None
    try:
        with transaction.atomic():
            VesselMove.objects.create(
                conversation=conversation,
                from_vessel_id=conversation.vessel_id,
                to_vessel=vessel,
                moved_by=moved_by,
            )
            Conversation.objects.filter(pk=conversation.pk).update(vessel=vessel)
    finally:
        release_turn(lock)
    conversation.vessel = vessel
