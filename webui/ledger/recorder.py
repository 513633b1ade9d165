"""The cache ledger: for every vessel call of a conversation, whether the front of its prompt held.

A moving prompt prefix does not show up as an error; it shows up on the bill and as latency. So each
call leaves a :class:`~webui.models.VesselCall` row with the usage the provider reported (one
shape for every provider, see :func:`webui.vessels.base.normalised_usage`) and the request's
*stable prefix*: everything the adapter serialised except the per-turn slot, cut into sections
(``tools``, ``vault``, ``memory``, ``disclosure``, ``history``, ``turn``) with a hash each, keyed
with a secret of the site's (:mod:`webui.ledger.section_hash`), so that no one who reads the ledger
can test a guessed prompt against it.
Provider cache markers are left out of the bytes: they say where the cache breaks, not what it
holds, and Anthropic's move to the newest message every turn.

A call whose prefix does not extend the previous call's in the same conversation is *drift*: the
row names the first section that moved and, where it is known, why (:data:`CAUSES`). A deliberate
move (a re-pin) is drift with a cause; one with no cause is a defect to show. Every drift is logged
as a warning with the conversation id. Rows hold hashes and counts only, never prompt text.

Writing a row never breaks a turn: the row is saved in the transaction that keeps the call's
round, or the reply, inside a savepoint of its own, and a failure is logged and the row dropped.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from django.db import DatabaseError, transaction

from webui.ledger.section_hash import SectionHasher, hasher_for, site_hasher
from webui.models import Conversation, Message, VesselCall, VesselMove
from webui.prompt_types import Prompt, ToolDefinition
from webui.text.canonical import canonical_bytes
from webui.vessels.encoding import list_bytes, stable_bytes, without_markers

if TYPE_CHECKING:
    from webui.vessels.base import VesselAdapter

logger = logging.getLogger(__name__)

#: The stable prefix's sections in the order a provider reads them. ``history`` is the turns
#: before this one; ``turn`` is this turn's newest user text and the tool rounds it has taken so
#: far (the per-turn slot left out), which the next turn's ``history`` must start with.
SECTIONS = ("tools", "vault", "memory", "disclosure", "history", "turn")
#: A drift's ``section`` when the bytes held but the conversation's vessel or model changed (a
#: provider's cache belongs to one model).
VESSEL_SECTION = "vessel"
#: The causes the host knows: the plug-in's come through the ``settle`` extension point
#: (``repin: <reason>``, ``forgotten``, ``engine_recovered``, ``first_pin``).
CAUSES = {
    "moved_by_member": "the conversation's member moved it to another vessel (model)",
    "vessel_changed": "the conversation's vessel, adapter or model changed",
    "disclosure_pinned": "a conversation from before disclosures were pinned pinned its own",
}


@dataclass(frozen=True)
class StablePrefix:
    """A request's stable prefix: each section's keyed hash (``hasher``'s), its length, its front
    sections' and its messages' bytes (to compare with a row hashed under another key)."""

    sections: dict[str, str]
    prefix_bytes: int
    messages: tuple[bytes, ...]
    history_messages: int
    turn_messages: int
    front: dict[str, bytes]
    hasher: SectionHasher


def stable_prefix(
    adapter: "VesselAdapter", *, prompt: Prompt, tools: Sequence[ToolDefinition]
) -> StablePrefix:
    """The stable prefix of the request ``adapter`` sends for ``prompt``: the request built the
    same way with the per-turn slot left out (the slot is the one part that drops out next
    turn), read at the keys the adapter names (``tools_key``, ``system_key``, ``messages_key``),
    its cache markers removed. The system text goes out verbatim in every adapter, so its
    sections are hashed as the prompt's own texts (:meth:`Prompt.front_sections`). Hashes are
    keyed with the site's secret (:func:`webui.ledger.section_hash.site_hasher`)."""
    stable = replace(prompt, turn_slot=())
    request = adapter.build_request(prompt=stable, tools=tools)
    markers = adapter.cache_marker_keys
    messages = list(request.get(adapter.messages_key) or [])
    leading = len(adapter.render_system(prompt.system_text))
    # The history's messages carry their bytes (webui.vessels.encoding): not encoded again.
    all_encoded = [stable_bytes(message, markers) for message in messages]
    encoded = tuple(all_encoded[leading:])
    turn_count = len(adapter.render_turn(stable))
    history, turn = encoded[: len(encoded) - turn_count], encoded[len(encoded) - turn_count :]
    tools_bytes = canonical_bytes(without_markers(request.get(adapter.tools_key) or [], markers))
    # The system text in its own field, or (``system_key`` None) inside the message list.
    system_bytes = (
        canonical_bytes(without_markers(request.get(adapter.system_key), markers))
        if adapter.system_key
        else b""
    )
    hasher = site_hasher()
    front = {
        "tools": tools_bytes,
        **{name: text.encode("utf-8") for name, text in prompt.front_sections().items()},
    }
    sections = {
        **{name: hasher(data) for name, data in front.items()},
        "history": hasher(list_bytes(history)),
        "turn": hasher(list_bytes(turn)),
    }
    return StablePrefix(
        sections=sections,
        prefix_bytes=len(tools_bytes) + len(system_bytes) + len(list_bytes(all_encoded)),
        messages=encoded,
        history_messages=len(history),
        turn_messages=len(turn),
        front=front,
        hasher=hasher,
    )


def first_moved(
    previous: VesselCall, current: StablePrefix, *, same_turn: bool, hasher: SectionHasher
) -> str | None:
    """The first section of ``current`` that does not extend ``previous``'s prefix, or ``None``,
    ``current``'s bytes hashed as ``previous``'s were (``hasher``, from its ``sections_key``).

    The front sections must be equal; the messages must start with the previous call's history
    and then its turn (within one turn, the turn so far grows by rounds; at the next turn it has
    become history).
    """
    same_key = hasher == current.hasher
    for name in SECTIONS[:4]:
        mine = current.sections[name] if same_key else hasher(current.front[name])
        if previous.sections.get(name) != mine:
            return name
    held, grown = previous.history_messages, previous.turn_messages
    messages = current.messages
    if len(messages) < held + grown:
        return "history" if len(messages) < held or not same_turn else "turn"
    if hasher(list_bytes(messages[:held])) != previous.sections.get("history"):
        return "history"
    if hasher(list_bytes(messages[held : held + grown])) != previous.sections.get("turn"):
        return "turn" if same_turn else "history"
    return None


@dataclass
class TurnLedger:
    """The ledger of one turn's calls: built once per turn, it reads the conversation's previous
    call once (one indexed query) and then carries the chain from call to call.

    ``causes`` are what the turn's pin settling moved on purpose, by section
    (:func:`webui.prompt.pins.settle_pins`); they name the first call's drift only.
    """

    conversation: Conversation
    user_message: Message
    adapter: "VesselAdapter"
    causes: dict[str, str] = field(default_factory=dict)
    previous: VesselCall | None = None
    looked_back: bool = False

    def previous_call(self) -> VesselCall | None:
        if not self.looked_back:
            self.previous = (
                VesselCall.objects.filter(conversation=self.conversation).order_by("-id").first()
            )
            self.looked_back = True
        return self.previous

    def call(
        self,
        *,
        prompt: Prompt,
        tools: Sequence[ToolDefinition],
        usage: dict[str, int],
        round_index: int,
        stopped: bool = False,
    ) -> VesselCall | None:
        """The row for the call just made with ``prompt`` and ``tools`` (unsaved: :func:`save_ledger_row`
        saves it with the call's round or reply), drift found and logged; ``None`` if the prefix
        could not be read, which is logged and costs the turn nothing."""
        try:
            prefix = stable_prefix(self.adapter, prompt=prompt, tools=tools)
            row = self.row(prefix, usage=usage, round_index=round_index, stopped=stopped)
        except Exception:
            logger.exception("The cache ledger could not read call %s of a turn", round_index)
            return None
        self.previous, self.looked_back, self.causes = row, True, {}
        return row

    def row(
        self, prefix: StablePrefix, *, usage: dict[str, int], round_index: int, stopped: bool
    ) -> VesselCall:
        vessel = self.adapter.vessel
        row = VesselCall(
            conversation=self.conversation,
            user_message=self.user_message,
            round=round_index,
            vessel=vessel,
            adapter=vessel.adapter,
            model=vessel.model,
            input_tokens=usage.get("input_tokens", 0),
            output_tokens=usage.get("output_tokens", 0),
            cache_read_tokens=usage.get("cached_input_tokens", 0),
            cache_write_tokens=usage.get("cache_write_tokens", 0),
            prefix_bytes=prefix.prefix_bytes,
            sections=prefix.sections,
            sections_key=prefix.hasher.key_id,
            history_messages=prefix.history_messages,
            turn_messages=prefix.turn_messages,
            stopped=stopped,
        )
        previous = self.previous_call()
        if previous is not None:
            self.find_drift(row, previous=previous, prefix=prefix)
        return row

    def find_drift(self, row: VesselCall, *, previous: VesselCall, prefix: StablePrefix) -> None:
        same_turn = previous.user_message_id == row.user_message_id
        hasher = hasher_for(previous.sections_key)
        if hasher is None:
            # Hashes under a key the site no longer holds cannot be compared with: whether the
            # bytes moved is not known, so no drift (nor a cause) is claimed for them, and this
            # row starts the chain afresh under the current key.
            logger.info(
                "Conversation %s: the previous ledger row was hashed with a key the site no "
                "longer holds; call %s of this turn starts the chain afresh.",
                self.conversation.pk,
                row.round,
            )
        section = (
            None
            if hasher is None
            else first_moved(previous, prefix, same_turn=same_turn, hasher=hasher)
        )
        changed = (previous.vessel_id, previous.adapter, previous.model) != (
            row.vessel_id,
            row.adapter,
            row.model,
        )
        if section is None and not changed:
            return
        row.drift_section = section or VESSEL_SECTION
        if changed:
            row.drift_cause = vessel_cause(self.conversation, previous=previous, row=row)
        else:
            row.drift_cause = self.causes.get(row.drift_section, "")
        logger.warning(
            "Prompt prefix drift in conversation %s: section %s moved at call %s of the turn "
            "answering %s (%s).",
            self.conversation.pk,
            row.drift_section,
            row.round,
            row.user_message_id,
            f"cause: {row.drift_cause}" if row.drift_cause else "no known cause: a defect",
        )


def vessel_cause(conversation: Conversation, *, previous: VesselCall, row: VesselCall) -> str:
    """Why the vessel changed between ``previous`` and ``row``: ``moved_by_member`` when the
    member moved the conversation to ``row``'s vessel since (a :class:`~webui.models.VesselMove`),
    else ``vessel_changed`` (an admin changed the vessel's adapter or model, say)."""
    if previous.created_at is None:  # a call of this same turn, not saved yet: no move between
        return "vessel_changed"
    moved = VesselMove.objects.filter(
        conversation=conversation, to_vessel_id=row.vessel_id, moved_at__gte=previous.created_at
    )
    return "moved_by_member" if moved.exists() else "vessel_changed"


def save_ledger_row(row: VesselCall | None) -> None:
    """Save ``row`` in the caller's transaction, in a savepoint of its own, so a failure to write
    it is logged and never undoes the round or the reply it is saved with."""
    if row is None:
        return
    try:
        with transaction.atomic():
            row.save()
    except DatabaseError:
        logger.exception(
            "The cache ledger could not save a call of conversation %s", row.conversation_id
        )
