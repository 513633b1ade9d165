"""A member's download of what they may see of a soul's memory: their own private memories and the
household's, as the export file's JSON Lines (kind ``member``) or one Markdown page grouped by month.

Both are generators that read the engine a page at a time (:func:`~pippa_memory.items.walking.walk_items`,
newest first, for that member as the viewer), so a download of 100,000 memories holds one page in
memory. Each item is checked again here (:func:`~pippa_memory.engine.members.may_see`), and one this
site tombstoned for the member (a forget whose answer was lost) is left out. The source of another
member's memory (their conversation ids) is never shown.
"""

from collections.abc import Iterator
from itertools import islice
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.dateparse import parse_datetime

from pippa_memory.engine.members import may_see, member_id, member_name
from pippa_memory.items.services import shown_here
from pippa_memory.items.walking import walk_items
from pippa_memory.portability import file_format
from webui.models import Soul

NO_SOURCE = {"conversation": None, "message": None, "tool_use": None}


def visible_memories(*, soul: Soul, user: AbstractBaseUser) -> Iterator[dict[str, Any]]:
    """Every memory ``user`` may see of ``soul``, newest first, as export memory lines with
    ``yours``; fetched a page at a time. The first page is asked for before the first is given,
    so an engine that is down is known before a response starts."""
    viewer = member_id(user)
    walk = walk_items(soul=soul, viewer=viewer)
    while True:
        page = list(islice(walk, 100))
        if not page:
            return
        for item in shown_here(soul=soul, viewer=viewer, items=page):
            if not may_see(viewer, item):
                continue
            yours = (item["said_by"] or {}).get("member") == viewer
            memory = file_format.memory_line(item)
            memory["source"] = memory["source"] if yours else NO_SOURCE
            memory["yours"] = yours
            yield memory


def json_lines(
    *, soul: Soul, user: AbstractBaseUser, memories: Iterator[dict[str, Any]]
) -> Iterator[str]:
    """The download as the export file (kind ``member``): a header, then one memory a line."""
    member = {"member": member_id(user), "name": member_name(user)}
    yield file_format.header(kind="member", soul=soul.slug, member=member, count=None)
    for memory in memories:
        yield file_format.line(memory)


def who_said(memory: dict[str, Any]) -> str:
    if memory["yours"]:
        return "said by you"
    if memory["said_by"] is None:
        return "kept by an unattended run"
    return f"said by {memory['said_by']['name'] or 'another member'}"


def one_line(text: str) -> str:
    """``text`` on one Markdown line: line breaks as spaces, so no memory can start a heading."""
    return " ".join(text.split())


def markdown(
    *, soul: Soul, user: AbstractBaseUser, memories: Iterator[dict[str, Any]]
) -> Iterator[str]:
    """The download as one Markdown page: front matter, then a heading per month, newest first,
    and under it a line per memory: when, the scope, who said it in words, the keep mark, the text."""
    name = member_name(user)
    yield (
        "---\n"
        f"soul: {soul.slug}\n"
        f"member: {member_id(user)}\n"
        "tags: [pippa, memory]\n"
        "---\n\n"
        f"# What {soul.name} remembers, as {name} may see it\n\n"
        "Your own memories (private ones marked as such) and the household's; those someone "
        "else said are marked with who said them.\n"
    )
    month = None
    count = 0
    for memory in memories:
        when = parse_datetime(memory["at"]) if memory["at"] else None
        heading = when.strftime("%B %Y") if when else "Undated"
        if heading != month:
            month = heading
            yield f"\n## {heading}\n\n"
        stamp = when.strftime("%Y-%m-%d %H:%M") if when else memory["at"]
        marks = [memory["scope"], who_said(memory)]
        if memory["keep"]:
            marks.append("kept in every chat")
        yield f"- **{stamp}** ({', '.join(marks)}): {one_line(memory['text'])}\n"
        replaced = memory.get("supersedes")
        if replaced:
            yield f"  - replaced “{one_line(replaced['text'])}” on {replaced['at'][:10]}\n"
        count += 1
    if count == 0:
        yield "\nNothing is remembered yet.\n"
