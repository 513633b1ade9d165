"""What the offline vessel says: short sentences a person would write, read from what it was sent.

The offline vessel is a host adapter, so it knows the memory plug-in only by what reaches it in a
request: the ``memory`` tool's results (JSON text, read here by their documented fields:
``docs/host.md``) and the per-turn slot's text (a background answer is a ``- Q: …`` line followed
by an ``  A: …`` line). Anything it cannot read as one of those gets ``None``, and the vessel says
what it was sent, plainly. Every sentence is deterministic: the same results give the same words.
"""

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

MEMORY_TOOL = "memory"
#: One background answer in the per-turn slot: its question, then its answer, up to the next one.
SLOT_ANSWER = re.compile(
    r"^- Q: (?P<question>.*?)\n  A: (?P<answer>.*?)(?=\n- Q: |\Z)", re.MULTILINE | re.DOTALL
)
ON_ITS_WAY = "I noted “{text}” a moment ago; it is on its way to memory."
ASKED = "I've asked my memory; the answer will come later."
ANSWER_RODE = "About your earlier question “{question}”: {answer}"


def one_line(text: str) -> str:
    """``text`` with its runs of whitespace (newlines included) as single spaces."""
    return " ".join(str(text).split())


def slot_answer_sentences(slot: Iterable[str]) -> list[str]:
    """One sentence per background answer the per-turn slot carries, in the slot's order."""
    return [
        ANSWER_RODE.format(question=one_line(found["question"]), answer=one_line(found["answer"]))
        for part in slot
        for found in SLOT_ANSWER.finditer(part)
    ]


def tool_output(text: Any) -> Any:
    """A tool result as sent (canonical JSON text), read back; ``None`` when it is not JSON."""
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None


def memory_sentences(*, verb: str, text: str, output: Any) -> str | None:
    """What the vessel says after the ``memory`` tool's ``verb`` about ``text`` gave ``output``;
    ``None`` when the output is not one of the memory tool's results."""
    if not isinstance(output, dict):
        return None
    lines = [ON_ITS_WAY.format(text=one_line(p["text"])) for p in pending_items(output)]
    if "error" in output:
        said = unavailable_sentence(verb, output)
    elif verb == "remember" and output.get("status") == "noted":
        said = remembered_sentence(text, output.get("scope"))
    elif verb == "ask" and output.get("status") == "asked":
        said = ASKED
    elif verb == "recall" and isinstance(output.get("items"), list):
        said = recalled_sentences(text, output, pending=bool(lines))
    else:
        return None
    return "\n".join([*lines, said])


def pending_items(output: dict[str, Any]) -> list[dict[str, Any]]:
    """The remembers a recall found still on their way to memory (``output["pending"]``)."""
    pending = output.get("pending")
    if not isinstance(pending, list):
        return []
    return [p for p in pending if isinstance(p, dict) and isinstance(p.get("text"), str)]


def remembered_sentence(text: str, scope: Any) -> str:
    """A ``remember`` the tool noted, and for whom it is kept."""
    whom = "everyone in the household" if scope == "household" else "you"
    return f"I'll remember that for {whom}: “{one_line(text)}”."


def recalled_sentences(query: str, output: dict[str, Any], *, pending: bool) -> str:
    """A recall's items with whose each is, under a sentence saying whether they matched ``query``
    or are the most recent memories instead (a fallback), or only close in meaning."""
    items = [item for item in output["items"] if isinstance(item, dict)]
    asked = one_line(query)
    if output.get("match") == "fallback":
        if items:
            head = f"Nothing matched “{asked}”, so here are the most recent memories instead:"
        elif pending:
            head = f"Nothing else about “{asked}” is in memory yet."
        else:
            head = f"Nothing matched “{asked}”, and I don't remember anything yet."
    elif items and output.get("match") == "meaning":
        head = "Nothing used those words; these are close in meaning:"
    elif items:
        head = f"Here is what I remember about “{asked}”:"
    elif pending:
        head = f"Nothing else about “{asked}” is in memory yet."
    else:
        head = f"I don't remember anything about “{asked}”."
    return "\n".join([head, *(item_line(item) for item in items)])


def item_line(item: dict[str, Any]) -> str:
    """One recalled item, and whose it is: a private item is always the viewer's own (nobody is
    shown another member's), a household one names who said it when someone did."""
    said_by = item.get("said_by")
    if item.get("scope") == "private":
        whose = "you told me; just for you"
    elif said_by:
        whose = f"{one_line(said_by)} told me; for the household"
    else:
        whose = "for the household"
    return f"- {one_line(item.get('text', ''))} ({whose})"


def unavailable_sentence(verb: str, output: dict[str, Any]) -> str:
    """Why the memory tool could not help, in words."""
    if output.get("error") == "memory_unavailable":
        reason = output.get("reason")
        if reason == "memory_disabled":
            return f"Memory is switched off here, so I can't {verb} that."
        if reason == "temporary":
            return f"Nothing is remembered in a temporary chat, so I can't {verb} that."
        return f"My memory can't be reached right now, so I can't {verb} that."
    return f"My memory tool could not do that: {one_line(output.get('message', output['error']))}"


def reply_from_results(calls: dict[str, dict[str, Any]], results: Sequence[dict[str, Any]]) -> str:
    """The vessel's reply to a round of tool results, one paragraph per result: the memory tool's
    in sentences, any other tool's (or an unreadable result) as ``(offline) name verb: output``."""
    paragraphs = []
    for result in results:
        call = calls.get(result["tool_call_id"], {})
        tool_input = call.get("input") if isinstance(call.get("input"), dict) else {}
        verb, text = str(tool_input.get("verb", "")), str(tool_input.get("text", ""))
        said = None
        if call.get("name") == MEMORY_TOOL:
            said = memory_sentences(verb=verb, text=text, output=tool_output(result["output"]))
        if said is None:
            said = f"(offline) {call.get('name', 'tool')} {verb}: {result['output']}"
        paragraphs.append(said)
    return "\n".join(paragraphs)
