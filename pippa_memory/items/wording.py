"""Who a memory came from, in a family's words, for the pages a member reads.

"You said it" only for what the member said in a chat: a memory kept for them with no chat it
came from (the demo household's seeded ones) is "Kept for you", not words put in their mouth. A
memory no member said is the soul's own note, or, with no chat at all, the household's.
"""

from django.contrib.auth.models import AbstractBaseUser

from pippa_memory.items.services import MemoryItem, MemoryRefusal, said_it


def said_words(user: AbstractBaseUser, item: MemoryItem, *, soul_name: str) -> str:
    """Who ``item`` came from, as ``user`` reads it."""
    if said_it(user, item):
        return "You said it" if item.conversation else "Kept for you"
    if item.said_by_member is not None:
        return f"{item.said_by_name} said it"
    if item.conversation:
        return f"{soul_name} noted it"
    return "The household's"


def scope_words(scope: str) -> str:
    """Who may see a memory, as its member reads it: only them, or the whole household."""
    return "Private to you" if scope == "private" else "Household"


def unavailable_for(user: AbstractBaseUser, refusal: MemoryRefusal, *, soul_name: str) -> str:
    """Why memory cannot be shown: the precise cause (setting names, the engine's reason) for
    staff, plain words for everyone else."""
    if user.is_staff:
        return refusal.message
    if refusal.reason == "memory_disabled":
        return "Memory is switched off for this household."
    return f"{soul_name}'s memory cannot be reached right now."
