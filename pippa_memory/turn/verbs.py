"""What each verb of the memory tool does. Every result says plainly what happened, and a fallback
says that it is one. Each reads and writes for the conversation's viewer: a recall or an ask sees
household items and that member's private ones (an unattended run: household items only), and a
``remember`` is kept with the scope :func:`~pippa_memory.engine.members.resolved_scope` gives it."""

import logging
from typing import Any

from pippa_memory.conf import memory_settings
from pippa_memory.engine import contract
from pippa_memory.engine.client import EngineOutcome, call_engine
from pippa_memory.engine.members import may_see, member_name, resolved_scope, viewer_id
from pippa_memory.models import Scope
from pippa_memory.pins.tombstones import tombstoned_items
from pippa_memory.turn.answers import record_ask
from pippa_memory.turn.on_its_way import on_its_way, with_on_its_way
from webui.models import Conversation

logger = logging.getLogger(__name__)


def memory_unavailable(reason: str, message: str) -> dict[str, Any]:
    """The tool result when the engine cannot help: the turn goes on and the model knows why."""
    return {"error": "memory_unavailable", "reason": reason, "message": message}


def unavailable_from(outcome: EngineOutcome) -> dict[str, Any]:
    return memory_unavailable(
        outcome.reason or "engine_error",
        f"Memory could not be reached ({outcome.detail or outcome.reason}); carry on without it, "
        "and do not claim to remember what you could not look up.",
    )


def remember(*, conversation: Conversation, text: str, scope: str | None) -> dict[str, Any]:
    """Nothing to call: the turn event carries the tool use, with the scope resolved here (the
    model's ``scope``, else the member's default), to the engine once the turn is saved."""
    kept = resolved_scope(conversation, asked=scope)
    if kept == Scope.HOUSEHOLD:
        who = "everyone in the household will see it"
    else:
        who = f"only {member_name(conversation.viewer)} will see it"
    return {
        "status": "noted",
        "scope": kept,
        "message": f"This will be kept in memory once the turn is saved; {who}.",
    }


def recall_item(item: dict[str, Any]) -> dict[str, Any]:
    """An item as the model reads it: what, when, whose (``scope``) and who said it (``None``: an
    unattended run), as the engine gave them."""
    said_by = item["said_by"]
    shown = {
        "text": item["text"],
        "at": item["at"],
        "scope": item["scope"],
        "said_by": said_by["name"] if said_by else None,
    }
    if "matched_by" in item:  # words, or close in meaning (contract version 3)
        shown["matched_by"] = item["matched_by"]
    return shown


def conversation_body(conversation: Conversation, **fields: Any) -> dict[str, Any]:
    """A verb's request to the engine: the soul, the conversation and its viewer, and ``fields``."""
    return {
        "soul": conversation.soul.slug,
        "conversation": str(conversation.id),
        "viewer": viewer_id(conversation),
        **fields,
    }


def recall(*, conversation: Conversation, text: str, budget: float) -> dict[str, Any]:
    """Ask the engine what the soul remembers about ``text`` that the viewer may see; say so when
    it fell back, and name what this conversation noted that is still on its way to memory
    (:mod:`pippa_memory.turn.on_its_way`; looked up before the engine is asked, so a remember
    delivered meanwhile is found by the engine rather than missed by both). An item tombstoned
    here for the viewer (a forget whose answer was lost) is left out, whatever the engine sent."""
    pending = on_its_way(conversation, text)
    viewer = viewer_id(conversation)
    outcome = call_engine(
        "POST",
        "/v1/recall",
        body=conversation_body(conversation, query=text, limit=memory_settings.RECALL_LIMIT),
        schema=contract.RECALL,
        budget=budget,
    )
    if not outcome.ok:
        return with_on_its_way(unavailable_from(outcome), pending, found=[])
    data = outcome.data
    visible = [item for item in data["items"] if may_see(viewer, item)]
    if len(visible) < len(data["items"]):
        logger.error(
            "The engine's recall for conversation %s held %d item(s) its viewer may not see; "
            "they were dropped [request %s].",
            conversation.pk,
            len(data["items"]) - len(visible),
            outcome.request_id,
        )
    gone = tombstoned_items(
        soul_id=conversation.soul_id, viewer=viewer or "", items=[item["id"] for item in visible]
    )
    items = [recall_item(item) for item in visible if item["id"] not in gone]
    result = recall_result(match=data["match"], fallback=data["fallback"], items=items, text=text)
    return with_on_its_way(result, pending, found=items)


def recall_result(
    *, match: str, fallback: dict[str, Any] | None, items: list[dict[str, Any]], text: str
) -> dict[str, Any]:
    """The recall's tool result: the items, and a note in words when it fell back, found none,
    or found only memories close in meaning."""
    result: dict[str, Any] = {"match": match, "items": items}
    if match == "fallback":
        fallback = fallback or {"from": text, "to": "a broader window", "reason": ""}
        result["fallback"] = fallback
        result["note"] = (
            f"Nothing matched {text!r}: these are not matches but a fallback from "
            f"{fallback['from']} to {fallback['to']}"
            + (f" ({fallback['reason']})" if fallback.get("reason") else "")
            + ". Say so if you use them."
        )
    elif not items:
        result["note"] = f"Nothing is remembered about {text!r}."
    elif match == "meaning":
        result["note"] = (
            "Nothing used those words; these are close in meaning: they may not be what was "
            "asked about. Say so if you use them."
        )
    return result


def ask(*, conversation: Conversation, text: str, budget: float) -> dict[str, Any]:
    """Hand a question to the engine, answered from what the viewer may see; its answer rides a
    later turn."""
    outcome = call_engine(
        "POST",
        "/v1/asks",
        body=conversation_body(conversation, question=text),
        schema=contract.ASK,
        budget=budget,
    )
    if not outcome.ok:
        return unavailable_from(outcome)
    record_ask(conversation=conversation, ask_id=outcome.data["ask_id"], question=text)
    return {
        "status": "asked",
        "ask_id": outcome.data["ask_id"],
        "message": "Your memory will answer this with a later turn; you need not wait for it.",
    }
