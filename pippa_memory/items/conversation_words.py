"""What "Pippa's memory in this chat" says, state by state: a heading, at most one sentence
under it, and the closed panel's one line; why a chat holds no memory is
:func:`pippa_memory.items.conversation_memory.absent_state`, by its pin record's cause. The page's
script only shows what the server worded.

Times are :func:`webui.web.moments.when_words`, in the member's own time zone; a chat that took
no memory is said so without a date.
"""

from datetime import datetime

from webui.web.moments import when_words


def pinned_heading(soul: str, *, taken_at: datetime, how: str) -> str:
    """The heading of a chat that holds a block: when it was taken, and by whom. ``how`` is
    ``began`` (its first turn), ``member_refresh`` (the member brought it up to date) or
    ``repinned`` (brought in again for another recorded reason)."""
    if how == "began":
        return f"What {soul} knew when this chat began"
    if how == "member_refresh":
        return f"What {soul} knew when you brought it up to date {when_words(taken_at)}"
    return f"What {soul} knew when her memory was brought in again {when_words(taken_at)}"


def waiting_words(soul: str, *, refreshed: bool) -> tuple[str, str]:
    """The heading and sentence of a chat that takes its memory at its next message."""
    if refreshed:
        return (
            f"{soul} takes her memory afresh at your next message",
            "You brought this chat up to date; until your next message it goes on as it was.",
        )
    return (f"{soul} takes her memory at your first message", "")


def temporary_words(soul: str) -> tuple[str, str]:
    """The heading and sentence of a temporary chat."""
    return (
        "No memory in a temporary chat",
        f"{soul} brings no memory into it and keeps nothing from it.",
    )


def newer_sentence(soul: str, newer: int) -> str:
    """What came since the chat took its memory, for a chat that can be brought up to date."""
    if newer == 0:
        return "Nothing new since: this chat is up to date."
    count = f"{newer} {'memory' if newer == 1 else 'memories'}"
    pronoun = "it" if newer == 1 else "them"
    return f"{count} came since; {soul} does not know {pronoun} in this chat yet."


def answer_sentence(*, ready: int, out: bool) -> str:
    """A question asked with ``ask``: its answer is ready (rides the next reply), or is being
    worked out; empty with no question out."""
    if ready:
        return "An answer to your question is ready: send any message to hear it."
    if out:
        return "Your question is still being worked out; its answer comes with a later reply."
    return ""


def closed_line(*, state: str, newer: int, answer_ready: bool) -> str:
    """The closed panel's one line after its title: what is news first, in a few words, so it
    fits a phone's width on one line (the heading, once opened, says when)."""
    if state == "temporary":
        return "none (temporary)"
    if state == "waiting":
        return "not taken yet"
    if answer_ready:
        return "answer ready"
    if newer:
        return f"{newer} new since"
    if state != "pinned":
        return "none"  # absent, too large, unusable: no memory in this chat
    return "up to date"
