"""What each verb of the memory tool does. Every result says plainly what happened, and a fallback
says that it is one."""

from typing import Any

from pippa_memory import contract
from pippa_memory.client import EngineAnswer, call_engine
from pippa_memory.conf import memory_settings
from pippa_memory.models import PendingAsk
from webui.models import Conversation


def memory_unavailable(reason: str, message: str) -> dict[str, Any]:
    """The tool result when the engine cannot help: the turn goes on and the model knows why."""
    return {"error": "memory_unavailable", "reason": reason, "message": message}


def unavailable_from(answer: EngineAnswer) -> dict[str, Any]:
    return memory_unavailable(
        answer.reason or "engine_error",
        f"Memory could not be reached ({answer.detail or answer.reason}); carry on without it, "
        "and do not claim to remember what you could not look up.",
    )


def remember(*, text: str) -> dict[str, Any]:
    """Nothing to call: the turn event carries the tool use to the engine once the turn is saved."""
    return {"status": "noted", "message": "This will be kept in memory once the turn is saved."}


def recall(*, conversation: Conversation, text: str, budget: float) -> dict[str, Any]:
    """Ask the engine what the soul remembers about ``text``; say so when it fell back."""
    answer = call_engine(
        "POST",
        "/v1/recall",
        body={
            "soul": conversation.soul.slug,
            "conversation": str(conversation.id),
            "query": text,
            "limit": memory_settings.RECALL_LIMIT,
        },
        schema=contract.RECALL,
        budget=budget,
    )
    if not answer.ok:
        return unavailable_from(answer)
    data = answer.data
    items = [{"text": item["text"], "at": item["at"]} for item in data["items"]]
    result: dict[str, Any] = {"match": data["match"], "items": items}
    if data["match"] == "fallback":
        fallback = data["fallback"] or {"from": text, "to": "a broader window", "reason": ""}
        result["fallback"] = fallback
        result["note"] = (
            f"Nothing matched {text!r}: these are not matches but a fallback from "
            f"{fallback['from']} to {fallback['to']}"
            + (f" ({fallback['reason']})" if fallback.get("reason") else "")
            + ". Say so if you use them."
        )
    elif not items:
        result["note"] = f"Nothing is remembered about {text!r}."
    return result


def ask(*, conversation: Conversation, text: str, budget: float) -> dict[str, Any]:
    """Hand a question to the engine; its answer rides a later turn."""
    answer = call_engine(
        "POST",
        "/v1/asks",
        body={
            "soul": conversation.soul.slug,
            "conversation": str(conversation.id),
            "question": text,
        },
        schema=contract.ASK,
        budget=budget,
    )
    if not answer.ok:
        return unavailable_from(answer)
    PendingAsk.objects.get_or_create(
        ask_id=answer.data["ask_id"], defaults={"conversation": conversation, "question": text}
    )
    return {
        "status": "asked",
        "ask_id": answer.data["ask_id"],
        "message": "Your memory will answer this with a later turn; you need not wait for it.",
    }
