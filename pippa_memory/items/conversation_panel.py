"""The conversation page's panel "Pippa's memory in this chat", registered with the host's
conversation page slot (:mod:`webui.web.page_slots`) from the plug-in's ``ready()``.

The panel is rendered from this side's rows only (no engine call, so the page never waits on
the engine); its script then reads the JSON route (:mod:`pippa_memory.items.conversation_api`)
for what the pinned block holds and how many memories came since, and offers "Bring up to date".
"""

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse

from pippa_memory.items.conversation_memory import REFRESH_COST, panel_line
from webui.models import Conversation


def render_memory_panel(request: HttpRequest, conversation: Conversation) -> str:
    """The panel's HTML for the member's own ``conversation``, collapsed."""
    context = {
        "conversation": conversation,
        "soul_name": conversation.soul.name,
        "url": reverse("api-memory-conversation", args=[conversation.pk]),
        "refresh_url": reverse("api-memory-conversation-refresh", args=[conversation.pk]),
        "refresh_cost": REFRESH_COST,
        "line": panel_line(conversation),
    }
    return render_to_string("pippa_memory/conversation_panel.html", context, request=request)
