"""Panels a plug-in adds to the conversation page, since the host never imports a plug-in.

A plug-in registers a :class:`ConversationPanel` from its ``AppConfig.ready()`` with
:func:`register_conversation_panel`; the conversation page shows what each one renders, in
registration order, between the conversation's heading and its messages. With no plug-in
installed there is none, and the page is whole without them.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.safestring import SafeString

from webui.models import Conversation

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConversationPanel:
    """One panel: its name (for logs), and ``render``, which gives the panel's HTML for the
    request's member and their own ``conversation`` (already checked as theirs), or ``""`` for
    none. ``render`` should only read, and not wait on the network: the page must not."""

    name: str
    render: Callable[[HttpRequest, Conversation], str]


_panels: list[ConversationPanel] = []


def register_conversation_panel(panel: ConversationPanel) -> None:
    """Add ``panel`` to the conversation page; registering the same name again replaces it."""
    _panels[:] = [known for known in _panels if known.name != panel.name]
    _panels.append(panel)


def conversation_panels(request: HttpRequest, conversation: Conversation) -> list[SafeString]:
    """Each registered panel's HTML for ``conversation``. A panel that fails is logged and left
    out: the conversation is shown anyway."""
    shown = []
    for panel in _panels:
        try:
            html = panel.render(request, conversation)
        except Exception:
            logger.exception("The conversation panel %s failed", panel.name)
            continue
        if html:
            shown.append(SafeString(html))
    return shown
